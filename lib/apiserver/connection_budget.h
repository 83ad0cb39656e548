// Private: how many connections one listener holds, overall and per source address, with room kept
// for health probes (https_server.h, "Connections").
//
// A listener admits `maxConnections` connections for any request. Beyond them, up to
// `probeReserve` more are admitted as probe-only: such a connection serves one request if it is a
// health probe (/healthz, /livez, /readyz) and is answered 503 otherwise, then closed. The kubelet
// opens a new connection per probe, so a listener full of clients still answers it. Beyond that,
// and beyond `maxPerSource` connections from one source address (whatever their kind), a new
// connection is closed at once, before any TLS work.
//
// Thread safety: thread-safe; a Ticket may be released from any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/core/scoped_release.h"

namespace gpuscale::apiserver::detail {

enum class Admission {
  kRegular,       // any request, keep-alive
  kProbeOnly,     // one health probe, then closed
  kListenerFull,  // refused: maxConnections + probeReserve open
  kSourceFull,    // refused: maxPerSource open from this address
};

class ConnectionBudget : public std::enable_shared_from_this<ConnectionBudget> {
  // How a Ticket gives its place back; it keeps the budget alive, so tickets may outlive it.
  struct TicketRelease {
    std::shared_ptr<ConnectionBudget> budget;
    std::string source;
    bool probeOnly;
    void operator()() const { budget->release(source, probeOnly); }
  };

 public:
  // Holds one admitted connection's place until destroyed.
  using Ticket = core::ScopedRelease<TicketRelease>;

  explicit ConnectionBudget(ListenerLimits limits) : limits_(limits) {}

  // Decides for a new connection from `source` (the peer's address, without the port); on
  // kRegular and kProbeOnly `ticket` holds the place.
  Admission admit(const std::string& source, Ticket& ticket);

  size_t open() const;
  const ListenerLimits& limits() const { return limits_; }

 private:
  void release(const std::string& source, bool probeOnly);

  const ListenerLimits limits_;
  mutable std::mutex mutex_;
  size_t regular_ = 0;
  size_t probeOnly_ = 0;
  std::unordered_map<std::string, size_t> perSource_;
};

}  // namespace gpuscale::apiserver::detail
