// The JSON documents the metrics APIs put on the wire, byte for byte as the Kubernetes machinery
// writes them (reference custom-metrics-api.md §5): field order of the Go structs, `"selector":
// null`, empty `"metadata":{}`, RFC3339 timestamps with seconds, `"resources": []` never null, and
// Go's encoding/json escaping.
//
// encodeJson() renders like Go's json.Encoder (compact + "\n"; "<", ">", "&", U+2028, U+2029
// escaped as \u003c etc.; invalid UTF-8 replaced by U+FFFD) or, when pretty, like
// json.MarshalIndent with two spaces and no trailing newline.
//
// Thread safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/apiserver/provider.h"
#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/result.h"

namespace gpuscale::apiserver {

using Json = nlohmann::ordered_json;

std::string encodeJson(const Json& document, bool pretty);

// "2024-05-01T10:00:00Z" (UTC, seconds; fractions dropped).
std::string formatTimestamp(Timestamp at);

// APIResourceList of a custom-metrics version: one "<resource>/<metric>" entry per metric.
Json customResourceListJson(std::string_view version, const std::vector<CustomMetricInfo>& metrics);
// APIResourceList of external.metrics.k8s.io/v1beta1: one "<metric>" entry per metric, `namespaced`
// as the metric's rule says.
Json externalResourceListJson(const std::vector<ExternalMetricInfo>& metrics);

// A served API group: its versions (in priority order) and the preferred one.
struct ApiGroupVersions {
  std::string name;
  std::vector<std::string> versions;
  std::string preferredVersion;
};
// `GET /apis/<group>`.
Json apiGroupJson(const ApiGroupVersions& group);
// `GET /apis`; `serverAddress` fills serverAddressByClientCIDRs (clientCIDR 0.0.0.0/0).
Json apiGroupListJson(const std::vector<ApiGroupVersions>& groups, std::string_view serverAddress);

// metav1.LabelSelector as ParseToLabelSelector builds it: = and == go to matchLabels; in, notin,
// exists, !key to matchExpressions. "!=" and gt/lt cannot be represented and are plain 500 errors
// with Kubernetes' text.
core::Result<Json> labelSelectorJson(const core::LabelSelector& selector);

// MetricValueList for `version` v1beta1 (metricName, selector, window) or v1beta2
// (metric{name,selector}, windowSeconds). Fails only when an item's selector cannot be represented
// (see labelSelectorJson).
core::Result<Json> metricValueListJson(std::string_view version,
                                       const std::vector<MetricValue>& items);

Json externalMetricValueListJson(const std::vector<ExternalMetricValue>& items);

// The same documents as text, written directly (the request hot path): byte-identical to
// encodeJson(metricValueListJson(version, items), pretty) and
// encodeJson(externalMetricValueListJson(items), pretty).
core::Result<std::string> encodeMetricValueList(std::string_view version,
                                                const std::vector<MetricValue>& items, bool pretty);
std::string encodeExternalMetricValueList(const std::vector<ExternalMetricValue>& items,
                                          bool pretty);

// Appends `text` as a JSON string literal escaped as Go's encoding/json does (see encodeJson()).
void appendJsonString(std::string& out, std::string_view text);

// `GET /version` (version.Info field order).
struct VersionInfo {
  std::string major = "0";
  std::string minor = "1";
  std::string gitVersion = "v0.1.0";
  std::string gitCommit;
  std::string gitTreeState;
  std::string buildDate;
  std::string goVersion;
  std::string compiler;
  std::string platform = "linux/amd64";
};
Json versionJson(const VersionInfo& info);

}  // namespace gpuscale::apiserver
