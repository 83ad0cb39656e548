#include "connection_budget.h"

#include <utility>

namespace gpuscale::apiserver::detail {

Admission ConnectionBudget::admit(const std::string& source, Ticket& ticket) {
  bool probeOnly = false;
  {
    std::lock_guard lock(mutex_);
    auto found = perSource_.find(source);
    const size_t fromSource = found == perSource_.end() ? 0 : found->second;
    if (limits_.maxPerSource != 0 && fromSource >= limits_.maxPerSource) {
      return Admission::kSourceFull;
    }
    if (limits_.maxConnections != 0 && regular_ >= limits_.maxConnections) {
      if (probeOnly_ >= limits_.probeReserve) return Admission::kListenerFull;
      probeOnly = true;
    }
    ++perSource_[source];
    ++(probeOnly ? probeOnly_ : regular_);
  }
  // Outside the lock: replacing a ticket that held a place releases it.
  ticket = Ticket(TicketRelease{shared_from_this(), source, probeOnly});
  return probeOnly ? Admission::kProbeOnly : Admission::kRegular;
}

size_t ConnectionBudget::open() const {
  std::lock_guard lock(mutex_);
  return regular_ + probeOnly_;
}

void ConnectionBudget::release(const std::string& source, bool probeOnly) {
  std::lock_guard lock(mutex_);
  --(probeOnly ? probeOnly_ : regular_);
  auto it = perSource_.find(source);
  if (it != perSource_.end() && --it->second == 0) perSource_.erase(it);
}

}  // namespace gpuscale::apiserver::detail
