// QueryRunner: how the providers ask Prometheus an instant query and what they make of failures.
//
// It runs the PromQL "now" through the (caching, coalescing) client, requires the result type the
// caller can use, and turns every failure into the Status the API layer sends: 503 when the cause
// is transient (connection refused, timeout, Prometheus overloaded) and 500 otherwise, both with
// the message "unable to fetch metrics: <cause class>: <detail>" (never the PromQL, never
// credentials), so an operator reading `kubectl get --raw` or the HPA's events knows what to fix.
// It also keeps the provider-side counters of `/metrics` (values dropped because they were NaN,
// cache statistics by backend: gpuscale_adapter_query_cache_total{backend,outcome},
// gpuscale_adapter_query_cache_entries{backend}, gpuscale_adapter_query_cache_bytes{backend} and
// gpuscale_adapter_query_cache_dropped_total{backend,reason} with reason "size" (least recently
// used result dropped to stay within --metrics-cache-max-bytes), "expired" (TTL passed) or
// "too_large" (a result larger than the whole cache, never kept)) and, for queries that name their
// origin, the per-rule and per-metric status (rule_status.h).
//
// Thread safety: thread-safe; run() blocks the calling thread (a server worker, never a Client
// callback thread).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <atomic>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/adapter/backend.h"
#include "gpuscale/adapter/rule_status.h"
#include "gpuscale/core/quantity.h"
#include "gpuscale/core/result.h"
#include "gpuscale/prom/caching_client.h"
#include "gpuscale/prom/client.h"

namespace gpuscale::adapter {

class QueryRunner {
 public:
  // `cache` (may be null) is only read for its statistics; queries go to `client`. `registry` may
  // be null (no metrics). `status` may be null (no per-rule status).
  QueryRunner(std::shared_ptr<prom::Client> client, std::shared_ptr<prom::CachingClient> cache,
              std::shared_ptr<prometheus::Registry> registry,
              std::shared_ptr<RuleStatus> status = nullptr);

  // Evaluates `promql` now through `backend`'s query client, or through `client` (the default
  // backend) when `backend` is null. A result of a type not in `accepted` is a 500 naming both
  // types. `origin` (may be null) names the rule and metric the query serves, for RuleStatus.
  core::Result<prom::QueryResultPtr> run(const Backend* backend, const std::string& promql,
                                         std::initializer_list<prom::ResultType> accepted,
                                         const QueryOrigin* origin = nullptr);
  core::Result<prom::QueryResultPtr> run(const std::string& promql,
                                         std::initializer_list<prom::ResultType> accepted,
                                         const QueryOrigin* origin = nullptr) {
    return run(nullptr, promql, accepted, origin);
  }

  // The quantity served for a sample's value, or nullopt when the value is not a number (NaN,
  // +Inf, -Inf). Both APIs leave such a sample out, so the object is missing (a named object is a
  // 404, a list lacks its item) and the HPA never sees a made-up 0 nor a saturated value that would
  // scale to the maximum (or wrap when it adds up items in int64); each one left out is counted by
  // `api` ("custom" or "external") in gpuscale_adapter_nan_values_total or
  // gpuscale_adapter_infinite_values_total. Finite values beyond the int64 milli range saturate
  // (core/quantity.h).
  std::optional<core::Quantity> servedValue(std::string_view api, double value);
  // Counts `value` as servedValue() does when it is NaN or ±Inf (nothing otherwise), for callers
  // that convert values themselves: `api` "resource" is metrics.k8s.io.
  void countUnservable(std::string_view api, double value);

  // The Status for a failed Prometheus call (see the file comment).
  static core::Status fetchError(const core::Status& cause);

 private:
  // What was published for one backend's cache (a reload replaces the cache: counting restarts
  // from the new cache's zero).
  struct PublishedCache {
    std::weak_ptr<prom::CachingClient> cache;
    prom::CacheStats stats;
    std::vector<prometheus::Counter*> counters;  // one per counted CacheStats field
    prometheus::Gauge* entries = nullptr;
    prometheus::Gauge* bytes = nullptr;
  };
  void publishCacheStats(const std::string& backend,
                         const std::shared_ptr<prom::CachingClient>& cache);

  std::shared_ptr<prom::Client> client_;
  std::shared_ptr<prom::CachingClient> cache_;
  std::shared_ptr<RuleStatus> status_;
  // Per api ("custom", "external", "resource"; empty without a registry): the samples left out.
  struct UnservableCounters {
    prometheus::Counter* nan = nullptr;
    prometheus::Counter* infinite = nullptr;
  };
  std::map<std::string, UnservableCounters, std::less<>> unservable_;
  prometheus::Family<prometheus::Counter>* cacheCalls_ = nullptr;
  prometheus::Family<prometheus::Gauge>* cacheEntries_ = nullptr;
  prometheus::Family<prometheus::Gauge>* cacheBytes_ = nullptr;
  prometheus::Family<prometheus::Counter>* cacheDrops_ = nullptr;
  std::atomic<bool> loggedTooLarge_{false};
  std::mutex statsMutex_;
  std::map<std::string, PublishedCache, std::less<>> published_;
};

}  // namespace gpuscale::adapter
