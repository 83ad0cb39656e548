#include "gpuscale/adapter/external_provider.h"

namespace gpuscale::adapter {

ExternalProvider::ExternalProvider(SnapshotSource snapshots, std::shared_ptr<QueryRunner> runner)
    : snapshots_(std::move(snapshots)), runner_(std::move(runner)) {}

std::vector<apiserver::ExternalMetricInfo> ExternalProvider::listMetrics() const {
  auto snapshot = snapshots_();
  std::vector<apiserver::ExternalMetricInfo> out;
  out.reserve(snapshot->external->entries().size());
  for (const rules::ExternalEntry& entry : snapshot->external->entries()) {
    out.push_back({entry.metric});
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
  auto add = [&](const prom::Point& point, const core::Labels* labels) {
    auto quantity = core::Quantity::fromMetricValue(point.value);
    if (!quantity) {
      runner_->countNaN("external");
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
    return core::Status::notFound(
        "the server could not find the metric " + std::string(metric) +
        " for namespaces: Prometheus has no data for it" +
        (namespaceName.empty() ? std::string() : " in namespace " + std::string(namespaceName)));
  }
  return items;
}

}  // namespace gpuscale::adapter
