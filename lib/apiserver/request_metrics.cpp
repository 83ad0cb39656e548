#include "gpuscale/apiserver/request_metrics.h"

#include <prometheus/text_serializer.h>

#include <sstream>

#include "gpuscale/core/heap_reclaimer.h"
#include "gpuscale/core/metric_families.h"

namespace gpuscale::apiserver {

RequestMetrics::RequestMetrics(std::shared_ptr<prometheus::Registry> registry)
    : registry_(std::move(registry)),
      heapInUse_(core::gauge(*registry_, "gpuscale_heap_in_use_bytes",
                             "Heap bytes in live allocations, read at each scrape.")),
      heapTrims_(core::counter(*registry_, "gpuscale_heap_trims_total",
                               "Times freed heap memory was handed back to the system.")),
      requests_(core::counterFamily(*registry_, "gpuscale_apiserver_requests_total",
                                    "HTTP requests served, by route and status code.")),
      durations_(core::histogramFamily(
          *registry_, "gpuscale_apiserver_request_duration_seconds",
          "Time from a parsed request to its response, by route and status code.")),
      inflight_(core::gauge(*registry_, "gpuscale_apiserver_inflight_requests",
                            "Requests being handled right now.")),
      kubeRequests_(
          core::histogramFamily(*registry_, "gpuscale_apiserver_kube_requests_per_request",
                                "kube-apiserver calls (reviews, lists) made while serving one "
                                "request, by route.")) {}

void RequestMetrics::observe(std::string_view route, int code, std::chrono::nanoseconds duration) {
  std::pair<prometheus::Counter*, prometheus::Histogram*> handles;
  {
    std::lock_guard lock(mutex_);
    auto key = std::make_pair(std::string(route), code);
    auto it = series_.find(key);
    if (it == series_.end()) {
      const prometheus::Labels labels{{"route", key.first}, {"code", std::to_string(code)}};
      static const prometheus::Histogram::BucketBoundaries kBuckets{
          0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
      auto* counter = &requests_.Add(labels);
      auto* histogram = &durations_.Add(labels, kBuckets);
      it = series_.emplace(std::move(key), std::make_pair(counter, histogram)).first;
    }
    handles = it->second;
  }
  handles.first->Increment();
  handles.second->Observe(std::chrono::duration<double>(duration).count());
}

void RequestMetrics::observeKubeRequests(std::string_view route, uint64_t calls) {
  prometheus::Histogram* histogram = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto it = kubeSeries_.find(route);
    if (it == kubeSeries_.end()) {
      static const prometheus::Histogram::BucketBoundaries kBuckets{0, 1, 2, 4, 8};
      it = kubeSeries_
               .emplace(std::string(route),
                        &kubeRequests_.Add({{"route", std::string(route)}}, kBuckets))
               .first;
    }
    histogram = it->second;
  }
  histogram->Observe(static_cast<double>(calls));
}

std::string RequestMetrics::exposition() const {
  heapInUse_.Set(static_cast<double>(core::HeapReclaimer::heapInUseBytes()));
  {
    std::lock_guard lock(mutex_);
    const uint64_t trims = core::HeapReclaimer::instance().stats().trims;
    if (trims > trimsSeen_) heapTrims_.Increment(static_cast<double>(trims - trimsSeen_));
    trimsSeen_ = trims;
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

}  // namespace gpuscale::apiserver
