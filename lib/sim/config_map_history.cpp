#include "gpuscale/sim/config_map_history.h"

namespace gpuscale::sim {

void ConfigMapHistory::record(const std::string& name, Ptr object, Clock::time_point seen) {
  std::lock_guard lock(mu_);
  auto& versions = versions_[name];
  versions.emplace_back(seen, std::move(object));
  // Only the newest version old enough to be in the file is needed, and those after it; anything
  // older than `seen - delay` is superseded for every later read.
  const auto cutoff = seen == Clock::time_point::min() ? seen : seen - delay_;
  while (versions.size() > 1 && versions[1].first <= cutoff) versions.pop_front();
}

ConfigMapHistory::Ptr ConfigMapHistory::asOf(const std::string& name, Clock::time_point now) const {
  std::lock_guard lock(mu_);
  auto it = versions_.find(name);
  if (it == versions_.end()) return nullptr;
  Ptr visible;
  for (const auto& [seen, object] : it->second) {
    if (seen != Clock::time_point::min() && now - seen < delay_) break;
    visible = object;
  }
  return visible;
}

}  // namespace gpuscale::sim
