// The provider seam: what the API layer asks of whoever knows the metrics (the adapter's
// Prometheus-backed providers, or a fake in tests). The HTTP layer knows only these interfaces, the
// value types below and a typed not-found error (a Status with reason NotFound, HTTP 404); rules,
// PromQL and Kubernetes lookups stay behind it.
//
// Contracts:
//  - listMetrics() is cheap and never blocks on a remote system: it returns the current registry
//  snapshot (an
//    empty list before the first discovery finished). Discovery documents are answered from it
//    immediately.
//  - The get* calls may block (they query Prometheus); they run on a server worker thread.
//  - Errors are Status values: NotFound (404) for unknown metrics and named objects without data
//  (build them
//    with metricNotFound()/objectMetricNotFound() so messages match Kubernetes'); 500/503 naming
//    the cause class when a backend fails ("unable to fetch metrics"); never a made-up value.
//  - A wildcard (getMetricBySelector) without data is an empty list, not an error.
//
// Thread safety: implementations must be safe to call from many threads at once.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/apiserver/auth.h"
#include "gpuscale/apiserver/metric_request.h"
#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/quantity.h"
#include "gpuscale/core/result.h"
#include "gpuscale/k8s/custom_metric_info.h"

namespace gpuscale::apiserver {

using Timestamp = std::chrono::system_clock::time_point;

// A custom metric the registry knows: which objects it describes and whether they are namespaced.
using CustomMetricInfo = k8s::CustomMetricInfo;

struct ExternalMetricInfo {
  std::string metric;
  // False for metrics of `resources: {namespaced: false}` rules (their query ignores the request's
  // namespace); discovery says so, unlike prometheus-adapter, which lists every external metric as
  // namespaced.
  bool namespaced = true;
  friend bool operator==(const ExternalMetricInfo&, const ExternalMetricInfo&) = default;
};

// core/v1 ObjectReference as the adapter fills it. `apiVersion` is "group/version", so "/v1" for
// core kinds (prometheus-adapter's quirk, kept on the wire).
struct ObjectReference {
  std::string kind;
  std::string namespaceName;  // empty for root-scoped objects (omitted on the wire)
  std::string name;
  std::string apiVersion;
};

struct MetricValue {
  ObjectReference describedObject;
  std::string metricName;
  Timestamp timestamp;
  std::optional<int64_t> windowSeconds;  // omitted on the wire when unset
  core::Quantity value;
  // The metric label selector the value was computed with; nullopt or empty -> `"selector": null`.
  std::optional<core::LabelSelector> selector;
};

struct ExternalMetricValue {
  std::string metricName;
  // All labels of the sample; nullopt renders as `null` (a scalar result), an empty map as `{}`.
  std::optional<std::map<std::string, std::string>> metricLabels;
  Timestamp timestamp;
  std::optional<int64_t> windowSeconds;
  core::Quantity value;
};

class CustomMetricsProvider {
 public:
  virtual ~CustomMetricsProvider() = default;

  // Every metric the registry currently serves (resource list of both custom versions).
  virtual std::vector<CustomMetricInfo> listMetrics() const = 0;

  // The metric of one object (`namespaceName` empty for root-scoped objects).
  virtual core::Result<MetricValue> getMetricByName(std::string_view namespaceName,
                                                    std::string_view name,
                                                    const CustomMetricInfo& info,
                                                    const core::LabelSelector& metricSelector) = 0;

  // The metric of every object of `info.resource` in `namespaceName` (all namespaces' objects when
  // empty and the resource is root-scoped) that matches `objectSelector`. Objects without data are
  // left out.
  virtual core::Result<std::vector<MetricValue>> getMetricBySelector(
      std::string_view namespaceName, const core::LabelSelector& objectSelector,
      const CustomMetricInfo& info, const core::LabelSelector& metricSelector) = 0;
};

class ExternalMetricsProvider {
 public:
  virtual ~ExternalMetricsProvider() = default;

  virtual std::vector<ExternalMetricInfo> listMetrics() const = 0;

  virtual core::Result<std::vector<ExternalMetricValue>> getExternalMetric(
      std::string_view namespaceName, std::string_view metric,
      const core::LabelSelector& metricSelector) = 0;

  // The same call as `caller` made it, with the request's `labelSelector` exactly as sent. The API
  // layer calls this one; providers that act on the caller's behalf (forwarding to another
  // external-metrics server) override it. The default ignores both and calls getExternalMetric().
  virtual core::Result<std::vector<ExternalMetricValue>> getExternalMetricAs(
      const UserInfo& caller, std::string_view rawLabelSelector, std::string_view namespaceName,
      std::string_view metric, const core::LabelSelector& metricSelector) {
    (void)caller;
    (void)rawLabelSelector;
    return getExternalMetric(namespaceName, metric, metricSelector);
  }
};

// 404 "the server could not find the metric <metric> for <resource>" (unknown metric, or no
// matching objects).
core::Status metricNotFound(const GroupResource& resource, std::string_view metric);
// 404 "the server could not find the metric <metric> for <resource> <name>" (named object without
// data).
core::Status objectMetricNotFound(const GroupResource& resource, std::string_view metric,
                                  std::string_view name);

}  // namespace gpuscale::apiserver
