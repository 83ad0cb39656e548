#include "gpuscale/prom/client_metrics.h"

#include <string>

#include "gpuscale/core/metric_families.h"

namespace gpuscale::prom {
namespace {

constexpr std::string_view kEndpoints[] = {"query", "series", "label_values", "labels"};

}  // namespace

ClientMetrics::ClientMetrics(prometheus::Registry& registry, std::string_view prefix,
                             std::string backendName)
    : backend_(std::move(backendName)),
      durations_(core::histogramFamily(
          registry, std::string(prefix) + "_prometheus_request_duration_seconds",
          "Latency of calls to Prometheus (every call that reached the HTTP "
          "client)")),
      results_(core::counterFamily(
          registry, std::string(prefix) + "_prometheus_requests_total",
          "Calls to Prometheus by endpoint and result (success or failure class)")) {
  const prometheus::Histogram::BucketBoundaries buckets{
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  for (std::string_view endpoint : kEndpoints) {
    histograms_.emplace(
        std::string(endpoint),
        &durations_.Add({{"backend", backend_}, {"endpoint", std::string(endpoint)}}, buckets));
    counter(endpoint, "success");
  }
}

prometheus::Counter& ClientMetrics::counter(std::string_view endpoint, std::string_view result) {
  std::lock_guard lock(mutex_);
  const std::pair<std::string, std::string> key{endpoint, result};
  auto it = counters_.find(key);
  if (it == counters_.end()) {
    prometheus::Counter* created =
        &results_.Add({{"backend", backend_}, {"endpoint", key.first}, {"result", key.second}});
    it = counters_.emplace(key, created).first;
  }
  return *it->second;
}

void ClientMetrics::callDone(std::string_view endpoint, std::string_view result, Seconds latency) {
  if (auto it = histograms_.find(endpoint); it != histograms_.end()) {
    it->second->Observe(latency.count());
  }
  counter(endpoint, result).Increment();
}

}  // namespace gpuscale::prom
