#include "gpuscale/adapter/custom_provider.h"

#include <chrono>
#include <map>
#include <optional>

#include "query_build_error.h"

namespace gpuscale::adapter {

struct CustomProvider::Lookup {
  std::shared_ptr<const DiscoverySnapshot> snapshot;  // keeps `entry` alive
  const rules::CustomEntry* entry = nullptr;
  k8s::ResourceInfo resource;
  std::string label;  // the Prometheus label holding object names

  const Backend* backend() const { return snapshot->backendFor(*entry->rule); }

  core::Result<std::string> render(std::string_view namespaceName,
                                   std::span<const std::string> names, bool allObjects,
                                   const core::LabelSelector& metricSelector) const {
    rules::QueryRequest request;
    request.seriesName = entry->seriesName;
    request.resource = resource.groupResource;
    request.namespaceName = namespaceName;
    request.names = names;
    request.anyName = allObjects;
    request.metricSelector = metricSelector.empty() ? nullptr : &metricSelector;
    auto query = entry->rule->queryFor(request);
    if (!query) return detail::queryBuildError(query.status());
    return query;
  }

  apiserver::MetricValue value(std::string_view namespaceName, std::string name,
                               const apiserver::CustomMetricInfo& info, core::Quantity quantity,
                               const core::LabelSelector& metricSelector,
                               apiserver::Timestamp at) const {
    apiserver::MetricValue out;
    out.describedObject.kind = resource.kind;
    out.describedObject.namespaceName = std::string(namespaceName);
    out.describedObject.name = std::move(name);
    out.describedObject.apiVersion = resource.groupResource.group + "/" + resource.version;
    out.metricName = info.metric;
    out.timestamp = at;
    out.value = quantity;
    if (!metricSelector.empty()) out.selector = metricSelector;
    return out;
  }
};

CustomProvider::CustomProvider(SnapshotSource snapshots, const k8s::ResourceMapper& mapper,
                               std::shared_ptr<ObjectLister> objects,
                               std::shared_ptr<QueryRunner> runner, CustomProviderOptions options)
    : snapshots_(std::move(snapshots)),
      mapper_(mapper),
      objects_(std::move(objects)),
      runner_(std::move(runner)),
      options_(options) {}

std::vector<apiserver::CustomMetricInfo> CustomProvider::listMetrics() const {
  auto snapshot = snapshots_();
  std::vector<apiserver::CustomMetricInfo> out;
  out.reserve(snapshot->custom->entries().size());
  for (const rules::CustomEntry& entry : snapshot->custom->entries()) {
    out.push_back(entry.info);
  }
  return out;
}

core::Result<CustomProvider::Lookup> CustomProvider::lookup(
    const apiserver::CustomMetricInfo& info) const {
  auto resource = mapper_.resourceFor({info.resource.group, info.resource.resource});
  if (!resource) return apiserver::metricNotFound(info.resource, info.metric);
  Lookup out;
  out.snapshot = snapshots_();
  out.entry = out.snapshot->custom->find(resource->groupResource, info.namespaced, info.metric);
  if (out.entry == nullptr) {
    return apiserver::metricNotFound(resource->groupResource, info.metric);
  }
  out.resource = *resource;
  auto label = out.entry->rule->resources().labelForResource(resource->groupResource);
  if (!label) return detail::queryBuildError(label.status());
  out.label = std::move(*label);
  return out;
}

core::Result<apiserver::MetricValue> CustomProvider::getMetricByName(
    std::string_view namespaceName, std::string_view name, const apiserver::CustomMetricInfo& info,
    const core::LabelSelector& metricSelector) {
  auto found = lookup(info);
  if (!found) return found.status();
  const std::string names[] = {std::string(name)};
  auto query = found->render(namespaceName, names, false, metricSelector);
  if (!query) return query.status();
  const QueryOrigin origin{found->entry->rule->path(), info.metric};
  auto result = runner_->run(found->backend(), *query, {prom::ResultType::kVector}, &origin);
  if (!result) return result.status();
  const prom::Sample* match = nullptr;
  for (const prom::Sample& sample : (*result)->vector) {
    auto it = sample.metric.find(found->label);
    if (it != sample.metric.end() && it->second == name) match = &sample;  // the last one wins
  }
  const auto notFound =
      apiserver::objectMetricNotFound(found->resource.groupResource, info.metric, name);
  if (match == nullptr) return notFound;
  std::optional<core::Quantity> quantity = runner_->servedValue("custom", match->point.value);
  if (!quantity) return notFound;
  return found->value(namespaceName, std::string(name), info, *quantity, metricSelector,
                      std::chrono::system_clock::now());
}

core::Result<std::vector<apiserver::MetricValue>> CustomProvider::getMetricBySelector(
    std::string_view namespaceName, const core::LabelSelector& objectSelector,
    const apiserver::CustomMetricInfo& info, const core::LabelSelector& metricSelector) {
  auto found = lookup(info);
  if (!found) return found.status();
  auto objects = objects_->listNames(found->resource, namespaceName, objectSelector);
  if (!objects) return objects.status();
  if (!objects->all && objects->names.empty()) {
    return apiserver::metricNotFound(found->resource.groupResource, info.metric);
  }

  bool namespaceWide = objects->all || objects->names.size() > options_.maxNamesInQuery;
  core::Result<std::string> query = core::Status::internal("no query");
  if (!namespaceWide) {
    query = found->render(namespaceName, objects->names, false, metricSelector);
    if (query && query->size() >= options_.maxQueryBytes) namespaceWide = true;
  }
  if (namespaceWide) query = found->render(namespaceName, {}, true, metricSelector);
  if (!query) return query.status();
  const QueryOrigin origin{found->entry->rule->path(), info.metric};
  auto result = runner_->run(found->backend(), *query, {prom::ResultType::kVector}, &origin);
  if (!result) return result.status();

  // Object name -> its sample's value; the last sample of a name wins (prometheus-adapter).
  std::map<std::string_view, double> values;
  for (const prom::Sample& sample : (*result)->vector) {
    auto it = sample.metric.find(found->label);
    if (it != sample.metric.end() && !it->second.empty()) values[it->second] = sample.point.value;
  }
  const auto now = std::chrono::system_clock::now();
  std::vector<apiserver::MetricValue> items;
  auto emit = [&](std::string_view name, double value) {
    std::optional<core::Quantity> quantity = runner_->servedValue("custom", value);
    if (!quantity) return;
    items.push_back(
        found->value(namespaceName, std::string(name), info, *quantity, metricSelector, now));
  };
  if (objects->all) {
    for (const auto& [name, value] : values) emit(name, value);
  } else {
    for (const std::string& name : objects->names) {
      if (auto it = values.find(name); it != values.end()) emit(name, it->second);
    }
  }
  return items;
}

}  // namespace gpuscale::adapter
