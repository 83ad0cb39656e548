#include "gpuscale/prom/observed_client.h"

#include <chrono>

#include "gpuscale/prom/errors.h"

namespace gpuscale::prom {

ObservedClient::ObservedClient(std::shared_ptr<Client> backend,
                               std::shared_ptr<ClientObserver> observer)
    : ForwardingClient(std::move(backend)), observer_(std::move(observer)) {}

template <typename T>
Callback<T> ObservedClient::observe(std::string_view endpoint, Callback<T> done) const {
  const auto start = std::chrono::steady_clock::now();
  return [observer = observer_, endpoint, start, done = std::move(done)](Result<T> result) {
    const ClientObserver::Seconds latency = std::chrono::steady_clock::now() - start;
    std::string_view outcome = "success";
    if (!result) {
      const auto kind = failureKindOf(result.status());
      outcome = kind ? failureKindName(*kind) : std::string_view("other");
    }
    observer->callDone(endpoint, outcome, latency);
    done(std::move(result));
  };
}

void ObservedClient::queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) {
  backend().queryAsync(std::move(promql), at, observe("query", std::move(done)));
}

void ObservedClient::seriesAsync(Matchers match, TimeRange window,
                                 Callback<std::vector<Series>> done) {
  backend().seriesAsync(std::move(match), window, observe("series", std::move(done)));
}

void ObservedClient::seriesLabelNamesAsync(Matchers match, TimeRange window,
                                           Callback<MetricLabelNames> done) {
  backend().seriesLabelNamesAsync(std::move(match), window, observe("series", std::move(done)));
}

void ObservedClient::labelValuesAsync(std::string label, Matchers match, TimeRange window,
                                      Callback<std::vector<std::string>> done) {
  backend().labelValuesAsync(std::move(label), std::move(match), window,
                             observe("label_values", std::move(done)));
}

void ObservedClient::labelNamesAsync(Matchers match, TimeRange window,
                                     Callback<std::vector<std::string>> done) {
  backend().labelNamesAsync(std::move(match), window, observe("labels", std::move(done)));
}

}  // namespace gpuscale::prom
