// The metrics.k8s.io documents. They go through the JSON tree (resource metrics are read every
// 15 s per HPA and per `kubectl top`, not on the custom metrics' hot path).
#include "gpuscale/apiserver/resource_metrics.h"

namespace gpuscale::apiserver {
namespace {

constexpr std::string_view kGroupVersion = "metrics.k8s.io/v1beta1";

Json usageJson(const ResourceUsage& usage) {
  Json out;
  out["cpu"] = usage.cpu.toString();
  out["memory"] = usage.memory.toString();
  return out;
}

// ObjectMeta in its Go field order: name, namespace, creationTimestamp, labels.
Json metadataJson(std::string_view namespaceName, std::string_view name, const core::Labels& labels,
                  Timestamp created) {
  Json out;
  out["name"] = name;
  if (!namespaceName.empty()) out["namespace"] = namespaceName;
  out["creationTimestamp"] = formatTimestamp(created);
  if (!labels.empty()) {
    Json map = Json::object();
    for (const auto& [key, value] : labels) map[key] = value;
    out["labels"] = std::move(map);
  }
  return out;
}

Json typed(std::string_view kind, bool withType) {
  Json out = Json::object();
  if (withType) {
    out["kind"] = kind;
    out["apiVersion"] = kGroupVersion;
  }
  return out;
}

Json resourceMetricsEntry(std::string_view name, bool namespaced, std::string_view kind) {
  Json entry;
  entry["name"] = name;
  entry["singularName"] = "";
  entry["namespaced"] = namespaced;
  entry["kind"] = kind;
  entry["verbs"] = Json::array({"get", "list"});
  return entry;
}

template <typename Item, typename Encode>
Json listJson(std::string_view kind, const std::vector<Item>& items, Encode encode) {
  Json list;
  list["kind"] = kind;
  list["apiVersion"] = kGroupVersion;
  list["metadata"] = Json::object();
  Json array = Json::array();
  for (const Item& item : items) array.push_back(encode(item));
  list["items"] = std::move(array);
  return list;
}

core::Status notFound(std::string_view group, std::string_view resource, std::string_view name) {
  core::StatusDetails details;
  details.name = std::string(name);
  details.group = std::string(group);
  details.kind = std::string(resource);
  const std::string qualified =
      group.empty() ? std::string(resource) : std::string(resource) + "." + std::string(group);
  return {404, "NotFound", qualified + " \"" + std::string(name) + "\" not found", details};
}

}  // namespace

core::Status objectNotFound(std::string_view resource, std::string_view name) {
  return notFound("", resource, name);
}

core::Status podMetricsNotFound(std::string_view namespaceName, std::string_view name) {
  return notFound(kResourceMetricsGroup, "podmetrics",
                  std::string(namespaceName) + "/" + std::string(name));
}

core::Status nodeMetricsNotFound(std::string_view name) {
  return notFound(kResourceMetricsGroup, "nodemetrics", name);
}

Json resourceMetricsResourceListJson() {
  Json list;
  list["kind"] = "APIResourceList";
  list["apiVersion"] = "v1";
  list["groupVersion"] = kGroupVersion;
  list["resources"] = Json::array({resourceMetricsEntry("nodes", false, "NodeMetrics"),
                                   resourceMetricsEntry("pods", true, "PodMetrics")});
  return list;
}

Json podMetricsJson(const PodMetrics& pod, Timestamp created, bool withType) {
  Json out = typed("PodMetrics", withType);
  out["metadata"] = metadataJson(pod.namespaceName, pod.name, pod.labels, created);
  out["timestamp"] = formatTimestamp(pod.timestamp);
  out["window"] = core::formatGoDuration(pod.window);
  Json containers = Json::array();
  for (const ContainerMetrics& container : pod.containers) {
    Json entry;
    entry["name"] = container.name;
    entry["usage"] = usageJson(container.usage);
    containers.push_back(std::move(entry));
  }
  out["containers"] = std::move(containers);
  return out;
}

Json nodeMetricsJson(const NodeMetrics& node, Timestamp created, bool withType) {
  Json out = typed("NodeMetrics", withType);
  out["metadata"] = metadataJson("", node.name, node.labels, created);
  out["timestamp"] = formatTimestamp(node.timestamp);
  out["window"] = core::formatGoDuration(node.window);
  out["usage"] = usageJson(node.usage);
  return out;
}

Json podMetricsListJson(const std::vector<PodMetrics>& pods, Timestamp created) {
  return listJson("PodMetricsList", pods,
                  [&](const PodMetrics& pod) { return podMetricsJson(pod, created, false); });
}

Json nodeMetricsListJson(const std::vector<NodeMetrics>& nodes, Timestamp created) {
  return listJson("NodeMetricsList", nodes,
                  [&](const NodeMetrics& node) { return nodeMetricsJson(node, created, false); });
}

}  // namespace gpuscale::apiserver
