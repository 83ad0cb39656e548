#include "gpuscale/adapter/query_runner.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>

#include "gpuscale/core/metric_families.h"
#include "gpuscale/core/no_wait.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::adapter {
namespace {

std::string acceptedNames(std::initializer_list<prom::ResultType> accepted) {
  std::string out;
  for (prom::ResultType type : accepted) {
    if (!out.empty()) out += " or ";
    out += prom::resultTypeName(type);
  }
  return out;
}

// The cache's counters: the CacheStats field each follows, in which family (calls or drops) and
// with which label value there.
struct CacheCounter {
  uint64_t prom::CacheStats::*field;
  bool drop;
  const char* label;
};
constexpr CacheCounter kCacheCounters[] = {
    {&prom::CacheStats::hits, false, "hit"},
    {&prom::CacheStats::coalesced, false, "coalesced"},
    {&prom::CacheStats::misses, false, "miss"},
    {&prom::CacheStats::evictions, true, "size"},
    {&prom::CacheStats::expired, true, "expired"},
    {&prom::CacheStats::tooLarge, true, "too_large"},
};

}  // namespace

QueryRunner::QueryRunner(std::shared_ptr<prom::Client> client,
                         std::shared_ptr<prom::CachingClient> cache,
                         std::shared_ptr<prometheus::Registry> registry,
                         std::shared_ptr<RuleStatus> status)
    : client_(std::move(client)), cache_(std::move(cache)), status_(std::move(status)) {
  if (!registry) return;
  auto& nan = core::counterFamily(*registry, "gpuscale_adapter_nan_values_total",
                                  "Samples left out of responses because Prometheus returned NaN");
  auto& infinite =
      core::counterFamily(*registry, "gpuscale_adapter_infinite_values_total",
                          "Samples left out of responses because Prometheus returned ±Inf");
  for (const char* api : {"custom", "external", "resource"}) {
    unservable_[api] = {&nan.Add({{"api", api}}), &infinite.Add({{"api", api}})};
  }
  cacheCalls_ = &core::counterFamily(
      *registry, "gpuscale_adapter_query_cache_total",
      "Instant queries by backend and how the cache answered them (hit: cached "
      "result, coalesced: joined a query in flight, miss: sent)");
  cacheEntries_ = &core::gaugeFamily(*registry, "gpuscale_adapter_query_cache_entries",
                                     "Query results held in the cache, by backend");
  cacheBytes_ =
      &core::gaugeFamily(*registry, "gpuscale_adapter_query_cache_bytes",
                         "Approximate bytes of the query results held in the cache, by backend");
  cacheDrops_ = &core::counterFamily(
      *registry, "gpuscale_adapter_query_cache_dropped_total",
      "Query results the cache dropped or never kept, by backend and reason "
      "(size: evicted for --metrics-cache-max-bytes or the entry cap, expired: "
      "TTL passed, too_large: larger than the whole cache)");
}

core::Status QueryRunner::fetchError(const core::Status& cause) {
  // An InternalError's message already carries "Internal error occurred: "; its cause is the text.
  const auto& causes = cause.details().causes;
  std::string message =
      "unable to fetch metrics: " + (causes.empty() ? cause.message() : causes.front());
  const core::Status wrapped = cause.httpCode() == 503 ? core::Status::unavailable(message)
                                                       : core::Status::internal(message);
  return wrapped.withPayloadOf(cause);
}

core::Result<prom::QueryResultPtr> QueryRunner::run(
    const Backend* backend, const std::string& promql,
    std::initializer_list<prom::ResultType> accepted, const QueryOrigin* origin) {
  spdlog::debug("query: {}", promql);
  prom::Client& client = backend != nullptr ? backend->queries() : *client_;
  core::Result<prom::QueryResultPtr> result =
      client.query(promql, std::chrono::system_clock::now());
  if (backend != nullptr) {
    publishCacheStats(backend->name(), backend->cache());
  } else {
    publishCacheStats(std::string(rules::kDefaultBackend), cache_);
  }
  // Refused on a thread that may not wait (core/no_wait.h): the request runs again elsewhere.
  if (!result && core::waitRefused()) return result.status();
  const bool report = status_ && origin != nullptr;
  if (!result) {
    if (report) status_->queryFailed(*origin, result.status(), std::chrono::system_clock::now());
    return fetchError(result.status());
  }
  for (prom::ResultType type : accepted) {
    if ((*result)->type != type) continue;
    if (report) status_->querySucceeded(*origin, **result, std::chrono::system_clock::now());
    return result;
  }
  core::Status wrongType =
      prom::failure(prom::FailureKind::kUnexpectedResultType,
                    "Prometheus returned a " + std::string(prom::resultTypeName((*result)->type)) +
                        " where a " + acceptedNames(accepted) + " was expected");
  if (report) status_->queryFailed(*origin, wrongType, std::chrono::system_clock::now());
  return fetchError(wrongType);
}

std::optional<core::Quantity> QueryRunner::servedValue(std::string_view api, double value) {
  if (std::isfinite(value)) {
    auto quantity = core::Quantity::fromMetricValue(value);
    if (quantity) return *quantity;
  }
  countUnservable(api, value);
  return std::nullopt;
}

void QueryRunner::countUnservable(std::string_view api, double value) {
  if (std::isfinite(value)) return;
  auto it = unservable_.find(api);
  if (it == unservable_.end()) it = unservable_.find("custom");
  if (it == unservable_.end()) return;  // no registry
  (std::isnan(value) ? it->second.nan : it->second.infinite)->Increment();
}

void QueryRunner::publishCacheStats(const std::string& backend,
                                    const std::shared_ptr<prom::CachingClient>& cache) {
  if (!cache || cacheCalls_ == nullptr) return;
  prom::CacheStats now = cache->stats();
  std::lock_guard lock(statsMutex_);
  auto [it, created] = published_.try_emplace(backend);
  PublishedCache& p = it->second;
  if (created) {
    for (const CacheCounter& c : kCacheCounters) {
      p.counters.push_back(c.drop
                               ? &cacheDrops_->Add({{"backend", backend}, {"reason", c.label}})
                               : &cacheCalls_->Add({{"backend", backend}, {"outcome", c.label}}));
    }
    p.entries = &cacheEntries_->Add({{"backend", backend}});
    p.bytes = &cacheBytes_->Add({{"backend", backend}});
  }
  if (p.cache.lock() != cache) {
    p.cache = cache;
    p.stats = {};
  }
  for (size_t k = 0; k < p.counters.size(); ++k) {
    const auto field = kCacheCounters[k].field;
    if (now.*field > p.stats.*field) {
      p.counters[k]->Increment(static_cast<double>(now.*field - p.stats.*field));
    }
  }
  if (now.tooLarge > p.stats.tooLarge && !loggedTooLarge_.exchange(true)) {
    spdlog::warn(
        "a query result of backend {} is larger than --metrics-cache-max-bytes and is not cached; "
        "this is logged once, gpuscale_adapter_query_cache_dropped_total{{reason=\"too_large\"}} "
        "counts them",
        backend);
  }
  p.entries->Set(static_cast<double>(now.entries));
  p.bytes->Set(static_cast<double>(now.bytes));
  p.stats = now;
}

}  // namespace gpuscale::adapter
