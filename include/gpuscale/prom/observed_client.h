// ObservedClient: a Client decorator that reports every call to a ClientObserver (its endpoint, its
// result class, its latency), through ForwardingClient's onCall() hook. Placed between a cache and
// the HTTP client, it sees real Prometheus calls only (cache hits and coalesced callers are not
// calls).
//
// Thread safety: thread-safe, like the wrapped client and the observer.
#pragma once

#include <memory>

#include "gpuscale/prom/client_observer.h"
#include "gpuscale/prom/forwarding_client.h"

namespace gpuscale::prom {

class ObservedClient final : public ForwardingClient {
 public:
  ObservedClient(std::shared_ptr<Client> backend, std::shared_ptr<ClientObserver> observer);

 private:
  CallDone onCall(std::string_view endpoint) override;

  std::shared_ptr<ClientObserver> observer_;
};

}  // namespace gpuscale::prom
