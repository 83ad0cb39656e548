// The server's own Prometheus metrics and the `/metrics` exposition.
//
// The registry is shared: other modules (Prometheus client, relister, rules) register their
// families on the same prometheus::Registry and `/metrics` serialises all of them with
// prometheus-cpp's text serializer. Families registered here:
//   gpuscale_apiserver_requests_total{route,code}             counter
//   gpuscale_apiserver_request_duration_seconds{route,code}   histogram (0.5 ms .. 10 s)
//   gpuscale_apiserver_inflight_requests                       gauge (requests being handled)
//   gpuscale_apiserver_kube_requests_per_request{route}        histogram of the kube-apiserver
//       calls (TokenReview, SubjectAccessReview, LIST) made while serving one request; its
//       _sum / _count is the mean, ~0 in steady state when reviews and objects come from caches
//   gpuscale_heap_in_use_bytes        gauge, read at each exposition: heap bytes the process holds
//       in live allocations (core::HeapReclaimer::heapInUseBytes), the measure a per-request leak
//       moves and allocator caching does not
//   gpuscale_heap_trims_total         counter: times freed heap was handed back to the system
// `route` is a fixed route name ("custom_metric", "discovery", "healthz", ...), never the raw path,
// so label cardinality stays bounded.
//
// Thread safety: all methods are thread-safe.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace gpuscale::apiserver {

class RequestMetrics {
 public:
  explicit RequestMetrics(std::shared_ptr<prometheus::Registry> registry);

  void observe(std::string_view route, int code, std::chrono::nanoseconds duration);
  // `calls` kube-apiserver calls were made while serving one request of `route`.
  void observeKubeRequests(std::string_view route, uint64_t calls);

  // Counts a request in flight for the lifetime of the returned object.
  class InFlight {
   public:
    explicit InFlight(prometheus::Gauge& gauge) : gauge_(gauge) { gauge_.Increment(); }
    ~InFlight() { gauge_.Decrement(); }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

   private:
    prometheus::Gauge& gauge_;
  };
  InFlight trackInFlight() { return InFlight(inflight_); }

  // The text exposition (format 0.0.4) of every family in the registry.
  std::string exposition() const;

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge& heapInUse_;
  prometheus::Counter& heapTrims_;
  mutable uint64_t trimsSeen_ = 0;  // under mutex_
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& durations_;
  prometheus::Gauge& inflight_;
  prometheus::Family<prometheus::Histogram>& kubeRequests_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::pair<prometheus::Counter*, prometheus::Histogram*>,
           std::less<>>
      series_;
  std::map<std::string, prometheus::Histogram*, std::less<>> kubeSeries_;
};

}  // namespace gpuscale::apiserver
