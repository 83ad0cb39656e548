#include "gpuscale/adapter/external_provider.h"

#include <spdlog/spdlog.h>

#include <optional>

#include "gpuscale/core/metric_families.h"

namespace gpuscale::adapter {

namespace {

// Bounds the memory of "already logged" (metric, namespace) pairs; past it, logging starts over.
constexpr size_t kMaxLoggedEmpty = 4096;

}  // namespace

ExternalProvider::ExternalProvider(SnapshotSource snapshots, std::shared_ptr<QueryRunner> runner,
                                   const std::shared_ptr<prometheus::Registry>& registry)
    : snapshots_(std::move(snapshots)), runner_(std::move(runner)) {
  if (registry) {
    emptyResults_ = &core::counter(*registry, "gpuscale_adapter_external_empty_results_total",
                                   "External metric requests answered with an empty list because "
                                   "Prometheus had no (finite) sample for them");
  }
}

void ExternalProvider::noteEmpty(std::string_view metric, std::string_view namespaceName,
                                 std::string_view cause) {
  if (emptyResults_ != nullptr) emptyResults_->Increment();
  bool first = false;
  {
    std::lock_guard lock(loggedMu_);
    if (logged_.size() >= kMaxLoggedEmpty) logged_.clear();
    first = logged_.emplace(std::string(metric), std::string(namespaceName)).second;
  }
  if (first) {
    spdlog::info("external metric {} answered with an empty list (logged once): {}", metric, cause);
  } else {
    spdlog::debug("external metric {} answered with an empty list: {}", metric, cause);
  }
}

std::vector<apiserver::ExternalMetricInfo> ExternalProvider::listMetrics() const {
  auto snapshot = snapshots_();
  std::vector<apiserver::ExternalMetricInfo> out;
  out.reserve(snapshot->external->entries().size());
  for (const rules::ExternalEntry& entry : snapshot->external->entries()) {
    out.push_back({entry.metric, true});
  }
  return out;
}

core::Result<std::vector<apiserver::ExternalMetricValue>> ExternalProvider::getExternalMetric(
    std::string_view namespaceName, std::string_view metric,
    const core::LabelSelector& metricSelector) {
  auto snapshot = snapshots_();
  const rules::ExternalEntry* entry = snapshot->external->find(metric);
  if (entry == nullptr) return apiserver::metricNotFound({"", "namespaces"}, metric);
  auto query = entry->rule->externalQueryFor(entry->seriesName, namespaceName,
                                             metricSelector.empty() ? nullptr : &metricSelector);
  if (!query) {
    if (query.status().httpCode() == 400) return query.status();
    return core::Status::internal("unable to build the query: " + query.status().message());
  }
  const QueryOrigin origin{entry->rule->path(), std::string(metric)};
  auto result = runner_->run(snapshot->backendFor(*entry->rule), *query,
                             {prom::ResultType::kVector, prom::ResultType::kScalar}, &origin);
  if (!result) return result.status();

  std::vector<apiserver::ExternalMetricValue> items;
  size_t leftOut = 0;
  auto add = [&](const prom::Point& point, const core::Labels* labels) {
    // The HPA sums the items' milli-values in int64: a saturated ±Inf would wrap around once two
    // of them are added, so non-numbers are left out (query_runner.h).
    std::optional<core::Quantity> quantity = runner_->servedValue("external", point.value);
    if (!quantity) {
      ++leftOut;
      return;
    }
    apiserver::ExternalMetricValue item;
    item.metricName = std::string(metric);
    if (labels != nullptr) item.metricLabels.emplace(labels->begin(), labels->end());
    item.timestamp = point.timestamp;
    item.value = *quantity;
    items.push_back(std::move(item));
  };
  if ((*result)->type == prom::ResultType::kScalar) {
    add((*result)->scalar, nullptr);
  } else {
    for (const prom::Sample& sample : (*result)->vector) add(sample.point, &sample.metric);
  }
  if (items.empty()) {
    std::string cause = "Prometheus has no data for it";
    if (entry->rule->namespaced() && !namespaceName.empty()) {
      cause += " in namespace " + std::string(namespaceName);
    }
    if (leftOut > 0) cause += " (" + std::to_string(leftOut) + " NaN or ±Inf samples left out)";
    noteEmpty(metric, namespaceName, cause);
  }
  return items;
}

}  // namespace gpuscale::adapter
