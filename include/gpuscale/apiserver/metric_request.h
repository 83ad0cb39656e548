// Routing of the metrics APIs: a request path + query under a served group-version becomes an
// ApiRoute (the version's resource list, a custom-metric request or an external-metric request) or
// the Status the Kubernetes machinery would answer with.
//
// Routes (reference custom-metrics-api.md §4.1), after
// `/apis/custom.metrics.k8s.io/<v1beta1|v1beta2>`:
//   ""                                          APIResourceList
//   /{resource}/{name|*}/{metric}               root-scoped object(s)
//   /namespaces/{ns}/{resource}/{name|*}/{metric}
//   /namespaces/{ns|*}/metrics/{metric}         the Namespace object(s) themselves
// and after `/apis/external.metrics.k8s.io/v1beta1`: "" and /namespaces/{ns}/{metric}.
// Errors: a path that matches no route is 404 "the server could not find the requested resource"
// (with empty details); a matching path with a method other than GET is 405; /namespaces/{ns}/{x}
// (three parts that collapse to fewer than three after namespace handling) is 400 "invalid request
// path"; a bad labelSelector or metricLabelSelector is 400; a fieldSelector other than empty or
// `metadata.name=<name in path>` is 400.
//
// Thread safety: pure functions; immutable values.
#pragma once

#include <string>
#include <string_view>

#include "gpuscale/apiserver/url.h"
#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/result.h"
#include "gpuscale/k8s/group_resource.h"

namespace gpuscale::apiserver {

inline constexpr std::string_view kCustomMetricsGroup = "custom.metrics.k8s.io";
inline constexpr std::string_view kExternalMetricsGroup = "external.metrics.k8s.io";

using k8s::GroupResource;

struct MetricRequest {
  std::string group;    // kCustomMetricsGroup or kExternalMetricsGroup
  std::string version;  // v1beta1 | v1beta2
  std::string
      namespaceName;       // "" for root-scoped objects (and for the Namespace objects themselves)
  GroupResource resource;  // custom only: what the metric describes
  std::string name;        // custom only: object name, or "*" when `wildcard`
  bool wildcard = false;
  std::string metric;
  std::string labelSelector;  // raw `labelSelector` (custom: objects; external: metric labels)
  std::string metricLabelSelector;     // raw `metricLabelSelector` (custom only)
  std::string fieldSelector;           // raw `fieldSelector`
  core::LabelSelector objectSelector;  // parsed labelSelector (custom wildcard requests)
  core::LabelSelector metricSelector;  // parsed metricLabelSelector, or labelSelector for external
};

struct ApiRoute {
  enum class Kind { kResourceList, kCustomMetric, kExternalMetric };
  Kind kind = Kind::kResourceList;
  MetricRequest request;  // group and version always set; the rest for metric requests
};

// Routes `path` (decoded) for `method`, given that it starts with "/apis/<group>/<version>" for a
// group-version the server serves. The query supplies the selectors.
core::Result<ApiRoute> routeMetricsApi(std::string_view method, std::string_view group,
                                       std::string_view version, std::string_view path,
                                       const QueryParams& query);

// The 404 Status of an unroutable path under a served API prefix.
core::Status resourceNotFoundStatus();
// The 405 Status of a routed path asked with the wrong method.
core::Status methodNotAllowedStatus();

}  // namespace gpuscale::apiserver
