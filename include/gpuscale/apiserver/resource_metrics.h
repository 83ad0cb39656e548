// The resource metrics API (metrics.k8s.io/v1beta1, what metrics-server serves and `kubectl top`
// and the HPA's `type: Resource` metrics read): its value types, the provider seam, routing and
// the JSON documents, byte for byte as metrics-server writes them.
//
// Routes after `/apis/metrics.k8s.io/v1beta1`:
//   ""                            APIResourceList (nodes: NodeMetrics, pods: PodMetrics; get, list)
//   /nodes, /nodes/{name}         NodeMetricsList, NodeMetrics
//   /pods                         PodMetricsList of every namespace
//   /namespaces/{ns}/pods[/{name}] PodMetricsList, PodMetrics
// A path that matches none is 404 "the server could not find the requested resource"; another
// method than GET is 405. Lists take `labelSelector` (the objects' Kubernetes labels) and
// `fieldSelector` (metadata.name and, for pods, metadata.namespace; other keys have no value, so
// `k=v` matches nothing and `k!=v` everything); either one that does not parse is 400. Pagination
// parameters (limit, continue, resourceVersion) are ignored, as metrics-server does.
//
// Wire format: `usage` keys sorted (cpu, memory); `window` as Go's Duration.String() ("5m0s");
// `timestamp` and `metadata.creationTimestamp` RFC3339 seconds; `metadata.labels` omitted when
// empty; list items carry no kind/apiVersion and the list's `metadata` is `{}`.
//
// Thread safety: pure functions and immutable values; providers must be thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/apiserver/provider.h"
#include "gpuscale/apiserver/url.h"
#include "gpuscale/apiserver/wire_format.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/quantity.h"
#include "gpuscale/core/result.h"

namespace gpuscale::apiserver {

inline constexpr std::string_view kResourceMetricsGroup = "metrics.k8s.io";

struct ResourceUsage {
  core::Quantity cpu;
  core::Quantity memory;
  friend bool operator==(const ResourceUsage&, const ResourceUsage&) = default;
};

struct ContainerMetrics {
  std::string name;
  ResourceUsage usage;
  friend bool operator==(const ContainerMetrics&, const ContainerMetrics&) = default;
};

struct PodMetrics {
  std::string namespaceName;
  std::string name;
  core::Labels labels;                       // the pod's labels, when known
  Timestamp timestamp;                       // when the usage was measured
  core::Duration window{0};                  // over how long it was measured
  std::vector<ContainerMetrics> containers;  // never empty
  friend bool operator==(const PodMetrics&, const PodMetrics&) = default;
};

struct NodeMetrics {
  std::string name;
  core::Labels labels;
  Timestamp timestamp;
  core::Duration window{0};
  ResourceUsage usage;
  friend bool operator==(const NodeMetrics&, const NodeMetrics&) = default;
};

// What the API layer asks for resource metrics. Contracts as the other providers (provider.h):
//  - lists contain only objects with data for every container and both resources, sorted by
//    namespace then name; an object without data is left out, never reported as 0;
//  - a named object that does not exist is 404 (`pods "x" not found`, podNotFound()); one that
//    exists without data is 404 podMetricsNotFound()/nodeMetricsNotFound();
//  - a backend failure is an error Status (500/503), never an empty or partial list.
class ResourceMetricsProvider {
 public:
  virtual ~ResourceMetricsProvider() = default;

  // `namespaceName` empty: every namespace.
  virtual core::Result<std::vector<PodMetrics>> listPodMetrics(
      std::string_view namespaceName, const core::LabelSelector& selector) = 0;
  virtual core::Result<PodMetrics> getPodMetrics(std::string_view namespaceName,
                                                 std::string_view name) = 0;
  virtual core::Result<std::vector<NodeMetrics>> listNodeMetrics(
      const core::LabelSelector& selector) = 0;
  virtual core::Result<NodeMetrics> getNodeMetrics(std::string_view name) = 0;
};

// 404 `<resource> "<name>" not found` as a Kubernetes lister says it (resource "pods", "nodes").
core::Status objectNotFound(std::string_view resource, std::string_view name);
// 404 `podmetrics.metrics.k8s.io "<ns>/<name>" not found` (metrics-server's answer for a pod
// without metrics).
core::Status podMetricsNotFound(std::string_view namespaceName, std::string_view name);
// 404 `nodemetrics.metrics.k8s.io "<name>" not found`.
core::Status nodeMetricsNotFound(std::string_view name);

struct ResourceMetricsRoute {
  enum class Kind { kResourceList, kPods, kNodes };
  Kind kind = Kind::kResourceList;
  std::string namespaceName;  // pods: "" for every namespace
  std::string name;           // "" for a list
  core::LabelSelector labelSelector;
  core::LabelSelector fieldSelector;
};

// Routes a decoded `path` that starts with "/apis/metrics.k8s.io/v1beta1" (see the file comment).
core::Result<ResourceMetricsRoute> routeResourceMetricsApi(std::string_view method,
                                                           std::string_view path,
                                                           const QueryParams& query);

// Whether a listed object passes a route's field selector.
bool matchesFieldSelector(const core::LabelSelector& fieldSelector, std::string_view namespaceName,
                          std::string_view name);

// `GET /apis/metrics.k8s.io/v1beta1`.
Json resourceMetricsResourceListJson();
// A PodMetrics / NodeMetrics object; `withType` adds kind and apiVersion (a single GET; list items
// have none). `created` fills metadata.creationTimestamp (metrics-server: the time of the answer).
Json podMetricsJson(const PodMetrics& pod, Timestamp created, bool withType);
Json nodeMetricsJson(const NodeMetrics& node, Timestamp created, bool withType);
Json podMetricsListJson(const std::vector<PodMetrics>& pods, Timestamp created);
Json nodeMetricsListJson(const std::vector<NodeMetrics>& nodes, Timestamp created);

}  // namespace gpuscale::apiserver
