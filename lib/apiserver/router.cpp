#include "gpuscale/apiserver/metric_request.h"

#include <optional>
#include <string>
#include <vector>

namespace gpuscale::apiserver {
namespace {

using core::Result;
using core::Status;

// Path parts after the group-version prefix; nullopt when the rest has empty parts (never
// routable).
std::optional<std::vector<std::string>> partsAfterPrefix(std::string_view rest) {
  std::vector<std::string> parts;
  if (rest.empty() || rest == "/") return parts;
  if (rest.front() != '/') return std::nullopt;
  rest.remove_prefix(1);
  while (true) {
    const size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    if (part.empty()) return std::nullopt;
    parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return parts;
}

Status fieldSelectorMismatch() {
  return Status::badRequest("fieldSelector metadata.name doesn't match requested name");
}

// Empty, or exactly one `metadata.name=<name>` / `metadata.name==<name>` term.
Status checkFieldSelector(std::string_view selector, std::string_view name) {
  if (selector.empty()) return {};
  constexpr std::string_view kKey = "metadata.name";
  if (selector.substr(0, kKey.size()) != kKey) return fieldSelectorMismatch();
  std::string_view value = selector.substr(kKey.size());
  if (value.substr(0, 2) == "==") {
    value.remove_prefix(2);
  } else if (value.substr(0, 1) == "=") {
    value.remove_prefix(1);
  } else {
    return fieldSelectorMismatch();
  }
  if (value != name) return fieldSelectorMismatch();
  return {};
}

Result<core::LabelSelector> parseSelector(std::string_view text) {
  auto parsed = core::LabelSelector::parse(text);
  if (!parsed) return Status::badRequest(parsed.status().message());
  return parsed;
}

bool isNamespaceSubresource(std::string_view part) {
  return part == "status" || part == "finalize";
}

// Fills resource/name/metric/namespace from the custom-metrics route parts, or explains the
// failure.
Status matchCustomRoute(const std::vector<std::string>& parts, MetricRequest& request,
                        bool& invalidPath) {
  invalidPath = false;
  if (parts.size() == 3) {
    // "{resource}/{name}/{metric}"; "namespaces/{ns}/{x}" matches too and collapses to one part.
    if (parts[0] == "namespaces" && !isNamespaceSubresource(parts[2])) invalidPath = true;
    request.resource = GroupResource::parse(parts[0]);
    request.name = parts[1];
    request.metric = parts[2];
    return {};
  }
  if (parts.size() == 4 && parts[0] == "namespaces" && parts[2] == "metrics") {
    request.resource = GroupResource{"", "namespaces"};
    request.name = parts[1];
    request.metric = parts[3];
    return {};
  }
  if (parts.size() == 5 && parts[0] == "namespaces") {
    request.namespaceName = parts[1];
    request.resource = GroupResource::parse(parts[2]);
    request.name = parts[3];
    request.metric = parts[4];
    return {};
  }
  return resourceNotFoundStatus();
}

}  // namespace

Status resourceNotFoundStatus() {
  core::StatusDetails details;
  details.present = true;
  return {404, "NotFound", "the server could not find the requested resource", details};
}

Status methodNotAllowedStatus() {
  core::StatusDetails details;
  details.present = true;
  return {405, "MethodNotAllowed",
          "the server does not allow this method on the requested resource", details};
}

Result<ApiRoute> routeMetricsApi(std::string_view method, std::string_view group,
                                 std::string_view version, std::string_view path,
                                 const QueryParams& query) {
  const std::string prefix = "/apis/" + std::string(group) + "/" + std::string(version);
  if (path.substr(0, prefix.size()) != prefix) return resourceNotFoundStatus();
  const auto parts = partsAfterPrefix(path.substr(prefix.size()));
  if (!parts) return resourceNotFoundStatus();

  ApiRoute route;
  route.request.group = std::string(group);
  route.request.version = std::string(version);
  const bool external = group == kExternalMetricsGroup;

  if (parts->empty()) {
    if (method != "GET") return methodNotAllowedStatus();
    route.kind = ApiRoute::Kind::kResourceList;
    return route;
  }

  MetricRequest& request = route.request;
  bool invalidPath = false;
  if (external) {
    if (parts->size() != 3 || (*parts)[0] != "namespaces") return resourceNotFoundStatus();
    request.namespaceName = (*parts)[1];
    request.metric = (*parts)[2];
  } else if (Status matched = matchCustomRoute(*parts, request, invalidPath); !matched.ok()) {
    return matched;
  }
  if (method != "GET") return methodNotAllowedStatus();

  request.labelSelector = query.get("labelSelector").value_or("");
  request.fieldSelector = query.get("fieldSelector").value_or("");
  auto labelSelector = parseSelector(request.labelSelector);
  if (!labelSelector) return labelSelector.status();

  if (external) {
    route.kind = ApiRoute::Kind::kExternalMetric;
    request.metricSelector = std::move(*labelSelector);
    return route;
  }

  // The name Kubernetes compares the field selector with is the path's {name} parameter, which for
  // /namespaces/{ns}/metrics/{name} is the metric.
  const bool namespaceMetric = parts->size() == 4;
  if (Status fields = checkFieldSelector(request.fieldSelector,
                                         namespaceMetric ? request.metric : request.name);
      !fields.ok()) {
    return fields;
  }
  if (invalidPath) return Status::badRequest("invalid request path");

  request.metricLabelSelector = query.get("metricLabelSelector").value_or("");
  auto metricSelector = parseSelector(request.metricLabelSelector);
  if (!metricSelector) return metricSelector.status();

  route.kind = ApiRoute::Kind::kCustomMetric;
  request.wildcard = request.name == "*";
  request.objectSelector = std::move(*labelSelector);
  request.metricSelector = std::move(*metricSelector);
  return route;
}

}  // namespace gpuscale::apiserver
