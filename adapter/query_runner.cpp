#include "gpuscale/adapter/query_runner.h"

#include <spdlog/spdlog.h>

#include <chrono>

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

void addDelta(prometheus::Counter* counter, uint64_t now, uint64_t before) {
  if (counter != nullptr && now > before) counter->Increment(static_cast<double>(now - before));
}

}  // namespace

QueryRunner::QueryRunner(std::shared_ptr<prom::Client> client,
                         std::shared_ptr<prom::CachingClient> cache,
                         std::shared_ptr<prometheus::Registry> registry)
    : client_(std::move(client)), cache_(std::move(cache)) {
  if (!registry) return;
  auto& nan = prometheus::BuildCounter()
                  .Name("gpuscale_adapter_nan_values_total")
                  .Help("Samples left out of responses because Prometheus returned NaN")
                  .Register(*registry);
  nanCustom_ = &nan.Add({{"api", "custom"}});
  nanExternal_ = &nan.Add({{"api", "external"}});
  infiniteExternal_ =
      &prometheus::BuildCounter()
           .Name("gpuscale_adapter_infinite_values_total")
           .Help("External-metric samples left out because Prometheus returned ±Inf")
           .Register(*registry)
           .Add({{"api", "external"}});
  auto& cache_calls = prometheus::BuildCounter()
                          .Name("gpuscale_adapter_query_cache_total")
                          .Help(
                              "Instant queries by how the cache answered them (hit: cached "
                              "result, coalesced: joined a query in flight, miss: sent)")
                          .Register(*registry);
  cacheHits_ = &cache_calls.Add({{"outcome", "hit"}});
  cacheCoalesced_ = &cache_calls.Add({{"outcome", "coalesced"}});
  cacheMisses_ = &cache_calls.Add({{"outcome", "miss"}});
  cacheEntries_ = &prometheus::BuildGauge()
                       .Name("gpuscale_adapter_query_cache_entries")
                       .Help("Query results held in the cache")
                       .Register(*registry)
                       .Add({});
}

core::Status QueryRunner::fetchError(const core::Status& cause) {
  // An InternalError's message already carries "Internal error occurred: "; its cause is the text.
  const auto& causes = cause.details().causes;
  std::string message =
      "unable to fetch metrics: " + (causes.empty() ? cause.message() : causes.front());
  if (cause.httpCode() == 503) return core::Status::unavailable(message);
  return core::Status::internal(message);
}

core::Result<prom::QueryResultPtr> QueryRunner::run(
    const std::string& promql, std::initializer_list<prom::ResultType> accepted) {
  spdlog::debug("query: {}", promql);
  core::Result<prom::QueryResultPtr> result =
      client_->query(promql, std::chrono::system_clock::now());
  publishCacheStats();
  if (!result) return fetchError(result.status());
  for (prom::ResultType type : accepted) {
    if ((*result)->type == type) return result;
  }
  return fetchError(prom::failure(prom::FailureKind::kUnexpectedResultType,
                                  "Prometheus returned a " +
                                      std::string(prom::resultTypeName((*result)->type)) +
                                      " where a " + acceptedNames(accepted) + " was expected"));
}

void QueryRunner::countNaN(std::string_view api) {
  prometheus::Counter* counter = api == "external" ? nanExternal_ : nanCustom_;
  if (counter != nullptr) counter->Increment();
}

void QueryRunner::countInfinite() {
  if (infiniteExternal_ != nullptr) infiniteExternal_->Increment();
}

void QueryRunner::publishCacheStats() {
  if (!cache_ || cacheHits_ == nullptr) return;
  prom::CacheStats now = cache_->stats();
  std::lock_guard lock(statsMutex_);
  addDelta(cacheHits_, now.hits, published_.hits);
  addDelta(cacheCoalesced_, now.coalesced, published_.coalesced);
  addDelta(cacheMisses_, now.misses, published_.misses);
  cacheEntries_->Set(static_cast<double>(now.entries));
  published_ = now;
}

}  // namespace gpuscale::adapter
