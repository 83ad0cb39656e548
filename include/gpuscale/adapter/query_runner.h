// QueryRunner: how the providers ask Prometheus an instant query and what they make of failures.
//
// It runs the PromQL "now" through the (caching, coalescing) client, requires the result type the
// caller can use, and turns every failure into the Status the API layer sends: 503 when the cause
// is transient (connection refused, timeout, Prometheus overloaded) and 500 otherwise, both with
// the message "unable to fetch metrics: <cause class>: <detail>" (never the PromQL, never
// credentials), so an operator reading `kubectl get --raw` or the HPA's events knows what to fix.
// It also keeps the provider-side counters of `/metrics` (values dropped because they were NaN,
// cache statistics).
//
// Thread safety: thread-safe; run() blocks the calling thread (a server worker, never a Client
// callback thread).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "gpuscale/core/result.h"
#include "gpuscale/prom/caching_client.h"
#include "gpuscale/prom/client.h"

namespace gpuscale::adapter {

class QueryRunner {
 public:
  // `cache` (may be null) is only read for its statistics; queries go to `client`. `registry` may
  // be null (no metrics).
  QueryRunner(std::shared_ptr<prom::Client> client, std::shared_ptr<prom::CachingClient> cache,
              std::shared_ptr<prometheus::Registry> registry);

  // Evaluates `promql` now. A result of a type not in `accepted` is a 500 naming both types.
  core::Result<prom::QueryResultPtr> run(const std::string& promql,
                                         std::initializer_list<prom::ResultType> accepted);

  // Counts a sample whose value was NaN (left out of a response; `api` is "custom" or "external").
  void countNaN(std::string_view api);
  // Counts an external-metric sample left out because its value was ±Inf.
  void countInfinite();

  // The Status for a failed Prometheus call (see the file comment).
  static core::Status fetchError(const core::Status& cause);

 private:
  void publishCacheStats();

  std::shared_ptr<prom::Client> client_;
  std::shared_ptr<prom::CachingClient> cache_;
  prometheus::Counter* nanCustom_ = nullptr;
  prometheus::Counter* nanExternal_ = nullptr;
  prometheus::Counter* infiniteExternal_ = nullptr;
  prometheus::Counter* cacheHits_ = nullptr;
  prometheus::Counter* cacheMisses_ = nullptr;
  prometheus::Counter* cacheCoalesced_ = nullptr;
  prometheus::Gauge* cacheEntries_ = nullptr;
  std::mutex statsMutex_;
  prom::CacheStats published_;
};

}  // namespace gpuscale::adapter
