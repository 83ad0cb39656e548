#include "gpuscale/prom/observed_client.h"

#include <chrono>

#include "gpuscale/prom/errors.h"

namespace gpuscale::prom {

ObservedClient::ObservedClient(std::shared_ptr<Client> backend,
                               std::shared_ptr<ClientObserver> observer)
    : ForwardingClient(std::move(backend)), observer_(std::move(observer)) {}

ForwardingClient::CallDone ObservedClient::onCall(std::string_view endpoint) {
  const auto start = std::chrono::steady_clock::now();
  return [observer = observer_, endpoint, start](const core::Status& outcome) {
    const ClientObserver::Seconds latency = std::chrono::steady_clock::now() - start;
    std::string_view result = "success";
    if (!outcome.ok()) {
      const auto kind = failureKindOf(outcome);
      result = kind ? failureKindName(*kind) : std::string_view("other");
    }
    observer->callDone(endpoint, result, latency);
  };
}

}  // namespace gpuscale::prom
