#include "gpuscale/adapter/instrumented_client.h"

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "gpuscale/prom/errors.h"

namespace gpuscale::adapter {

// The families' children for one endpoint; result counters are created on first use.
struct InstrumentedClient::Endpoint {
  prometheus::Histogram* duration = nullptr;
  prometheus::Family<prometheus::Counter>* results = nullptr;
  std::string name;
  std::string backend;
  std::mutex mutex;
  std::map<std::string, prometheus::Counter*, std::less<>> counters;

  template <typename T>
  prom::Callback<T> wrap(std::shared_ptr<Endpoint> self, prom::Callback<T> done) {
    auto start = std::chrono::steady_clock::now();
    return [self = std::move(self), start, done = std::move(done)](prom::Result<T> result) {
      std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      self->duration->Observe(elapsed.count());
      std::string_view outcome = "success";
      if (!result) {
        auto kind = prom::failureKindOf(result.status());
        outcome = kind ? prom::failureKindName(*kind) : std::string_view("other");
      }
      self->counter(outcome)->Increment();
      done(std::move(result));
    };
  }

  prometheus::Counter* counter(std::string_view outcome) {
    std::lock_guard lock(mutex);
    auto it = counters.find(outcome);
    if (it != counters.end()) return it->second;
    prometheus::Counter* c =
        &results->Add({{"backend", backend}, {"endpoint", name}, {"result", std::string(outcome)}});
    counters.emplace(std::string(outcome), c);
    return c;
  }
};

InstrumentedClient::InstrumentedClient(std::shared_ptr<prom::Client> backend,
                                       std::shared_ptr<prometheus::Registry> registry,
                                       std::string backendName)
    : backend_(std::move(backend)), registry_(std::move(registry)) {
  auto& durations =
      prometheus::BuildHistogram()
          .Name("gpuscale_adapter_prometheus_request_duration_seconds")
          .Help("Latency of calls to Prometheus (every call that reached the HTTP client)")
          .Register(*registry_);
  auto& results = prometheus::BuildCounter()
                      .Name("gpuscale_adapter_prometheus_requests_total")
                      .Help("Calls to Prometheus by endpoint and result (success or failure class)")
                      .Register(*registry_);
  const prometheus::Histogram::BucketBoundaries buckets{
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  auto make = [&](const std::string& name) {
    auto endpoint = std::make_shared<Endpoint>();
    endpoint->name = name;
    endpoint->backend = backendName;
    endpoint->duration = &durations.Add({{"backend", backendName}, {"endpoint", name}}, buckets);
    endpoint->results = &results;
    endpoint->counter("success");
    return endpoint;
  };
  query_ = make("query");
  series_ = make("series");
  labelValues_ = make("label_values");
  labelNames_ = make("labels");
}

void InstrumentedClient::queryAsync(std::string promql, prom::Timestamp at,
                                    prom::Callback<prom::QueryResultPtr> done) {
  backend_->queryAsync(std::move(promql), at, query_->wrap(query_, std::move(done)));
}

void InstrumentedClient::seriesAsync(prom::Matchers match, prom::TimeRange window,
                                     prom::Callback<std::vector<prom::Series>> done) {
  backend_->seriesAsync(std::move(match), window, series_->wrap(series_, std::move(done)));
}

void InstrumentedClient::seriesLabelNamesAsync(prom::Matchers match, prom::TimeRange window,
                                               prom::Callback<prom::MetricLabelNames> done) {
  backend_->seriesLabelNamesAsync(std::move(match), window,
                                  series_->wrap(series_, std::move(done)));
}

void InstrumentedClient::labelValuesAsync(std::string label, prom::Matchers match,
                                          prom::TimeRange window,
                                          prom::Callback<std::vector<std::string>> done) {
  backend_->labelValuesAsync(std::move(label), std::move(match), window,
                             labelValues_->wrap(labelValues_, std::move(done)));
}

void InstrumentedClient::labelNamesAsync(prom::Matchers match, prom::TimeRange window,
                                         prom::Callback<std::vector<std::string>> done) {
  backend_->labelNamesAsync(std::move(match), window,
                            labelNames_->wrap(labelNames_, std::move(done)));
}

}  // namespace gpuscale::adapter
