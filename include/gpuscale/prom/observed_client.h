// ObservedClient: a Client decorator that reports every call to a ClientObserver (its endpoint, its
// result class, its latency). Placed between a cache and the HTTP client, it sees real Prometheus
// calls only (cache hits and coalesced callers are not calls).
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

  void queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) override;
  void seriesAsync(Matchers match, TimeRange window, Callback<std::vector<Series>> done) override;
  // Reported as a series call: the same endpoint, decoded straight to the label-name view.
  void seriesLabelNamesAsync(Matchers match, TimeRange window,
                             Callback<MetricLabelNames> done) override;
  void labelValuesAsync(std::string label, Matchers match, TimeRange window,
                        Callback<std::vector<std::string>> done) override;
  void labelNamesAsync(Matchers match, TimeRange window,
                       Callback<std::vector<std::string>> done) override;

 private:
  template <typename T>
  Callback<T> observe(std::string_view endpoint, Callback<T> done) const;

  std::shared_ptr<ClientObserver> observer_;
};

}  // namespace gpuscale::prom
