#include <string>
#include <vector>

#include "gpuscale/apiserver/metric_request.h"
#include "gpuscale/apiserver/resource_metrics.h"

namespace gpuscale::apiserver {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kPrefix = "/apis/metrics.k8s.io/v1beta1";

// Path parts after the prefix; an empty part makes the path unroutable.
Result<std::vector<std::string_view>> splitParts(std::string_view rest) {
  std::vector<std::string_view> parts;
  if (rest.empty() || rest == "/") return parts;
  if (rest.front() != '/') return resourceNotFoundStatus();
  rest.remove_prefix(1);
  while (true) {
    const size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    if (part.empty()) return resourceNotFoundStatus();
    parts.push_back(part);
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return parts;
}

Result<core::LabelSelector> selectorParam(const QueryParams& query, const char* name) {
  auto parsed = core::LabelSelector::parse(query.get(name).value_or(""));
  if (!parsed) return Status::badRequest(parsed.status().message());
  return parsed;
}

}  // namespace

Result<ResourceMetricsRoute> routeResourceMetricsApi(std::string_view method, std::string_view path,
                                                     const QueryParams& query) {
  if (!path.starts_with(kPrefix)) return resourceNotFoundStatus();
  auto parts = splitParts(path.substr(kPrefix.size()));
  if (!parts) return parts.status();

  ResourceMetricsRoute route;
  const auto& p = *parts;
  const size_t n = p.size();
  if (n == 0) {
    route.kind = ResourceMetricsRoute::Kind::kResourceList;
  } else if (p[0] == "nodes" && n <= 2) {
    route.kind = ResourceMetricsRoute::Kind::kNodes;
    if (n == 2) route.name = std::string(p[1]);
  } else if (p[0] == "pods" && n <= 2) {
    // A named pod needs its namespace; /pods/{name} is no route.
    if (n == 2) return resourceNotFoundStatus();
    route.kind = ResourceMetricsRoute::Kind::kPods;
  } else if (p[0] == "namespaces" && (n == 3 || n == 4) && p[2] == "pods") {
    route.kind = ResourceMetricsRoute::Kind::kPods;
    route.namespaceName = std::string(p[1]);
    if (n == 4) route.name = std::string(p[3]);
  } else {
    return resourceNotFoundStatus();
  }
  if (method != "GET") return methodNotAllowedStatus();
  if (route.kind == ResourceMetricsRoute::Kind::kResourceList) return route;

  auto labels = selectorParam(query, "labelSelector");
  if (!labels) return labels.status();
  auto fields = selectorParam(query, "fieldSelector");
  if (!fields) return fields.status();
  route.labelSelector = std::move(*labels);
  route.fieldSelector = std::move(*fields);
  return route;
}

bool matchesFieldSelector(const core::LabelSelector& fieldSelector, std::string_view namespaceName,
                          std::string_view name) {
  if (fieldSelector.empty()) return true;
  core::Labels fields;
  fields.emplace("metadata.name", name);
  if (!namespaceName.empty()) fields.emplace("metadata.namespace", namespaceName);
  return fieldSelector.matches(fields);
}

}  // namespace gpuscale::apiserver
