#include "gpuscale/apiserver/wire_format.h"

#include "gpuscale/core/enum_names.h"
#include "gpuscale/core/rfc3339.h"

#include <map>

namespace gpuscale::apiserver {
namespace {

using core::Result;
using core::SelectorOperator;
using core::Status;

// nlohmann leaves these as they are; Go's encoder escapes them (HTML safety, JavaScript line
// separators). They cannot occur outside strings in JSON output, so escaping the whole text is
// exact.
std::string escapeLikeGo(std::string text) {
  size_t extra = 0;
  for (const char c : text) {
    if (c == '<' || c == '>' || c == '&') extra += 5;
  }
  if (extra == 0 && text.find("\xE2\x80") == std::string::npos) return text;
  std::string out;
  out.reserve(text.size() + extra);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Json resourceEntry(std::string name, bool namespaced, std::string_view kind) {
  Json entry;
  entry["name"] = std::move(name);
  entry["singularName"] = "";
  entry["namespaced"] = namespaced;
  entry["kind"] = kind;
  entry["verbs"] = Json::array({"get"});
  return entry;
}

Json resourceList(std::string groupVersion, Json resources) {
  Json list;
  list["kind"] = "APIResourceList";
  list["apiVersion"] = "v1";
  list["groupVersion"] = std::move(groupVersion);
  list["resources"] = std::move(resources);
  return list;
}

Json groupVersionJson(const std::string& group, const std::string& version) {
  Json out;
  out["groupVersion"] = group + "/" + version;
  out["version"] = version;
  return out;
}

// The fields of an APIGroup after kind/apiVersion (which `out` may already hold).
void addGroupFields(Json& out, const ApiGroupVersions& group) {
  out["name"] = group.name;
  Json versions = Json::array();
  for (const auto& version : group.versions)
    versions.push_back(groupVersionJson(group.name, version));
  out["versions"] = std::move(versions);
  out["preferredVersion"] = groupVersionJson(group.name, group.preferredVersion);
}

Json objectReferenceJson(const ObjectReference& ref) {
  Json out = Json::object();
  if (!ref.kind.empty()) out["kind"] = ref.kind;
  if (!ref.namespaceName.empty()) out["namespace"] = ref.namespaceName;
  if (!ref.name.empty()) out["name"] = ref.name;
  if (!ref.apiVersion.empty()) out["apiVersion"] = ref.apiVersion;
  return out;
}

Result<Json> selectorOrNull(const std::optional<core::LabelSelector>& selector) {
  if (!selector || selector->empty()) return Json(nullptr);
  return labelSelectorJson(*selector);
}

std::string_view expressionOperator(SelectorOperator op) {
  static constexpr core::EnumNames<SelectorOperator, 4> kNames{
      {{SelectorOperator::kIn, "In"},
       {SelectorOperator::kNotIn, "NotIn"},
       {SelectorOperator::kExists, "Exists"},
       {SelectorOperator::kDoesNotExist, "DoesNotExist"}}};
  return core::enumName(kNames, op, "");
}

Json listEnvelope(std::string_view kind, std::string_view apiVersion, Json items) {
  Json list;
  list["kind"] = kind;
  list["apiVersion"] = apiVersion;
  list["metadata"] = Json::object();
  list["items"] = std::move(items);
  return list;
}

}  // namespace

std::string encodeJson(const Json& document, bool pretty) {
  std::string text = document.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace);
  if (!pretty) text.push_back('\n');
  return escapeLikeGo(std::move(text));
}

std::string formatTimestamp(Timestamp at) { return core::formatRfc3339(at); }

Json customResourceListJson(std::string_view version,
                            const std::vector<CustomMetricInfo>& metrics) {
  Json resources = Json::array();
  for (const auto& info : metrics) {
    resources.push_back(resourceEntry(info.resource.toString() + "/" + info.metric, info.namespaced,
                                      "MetricValueList"));
  }
  return resourceList(std::string(kCustomMetricsGroup) + "/" + std::string(version),
                      std::move(resources));
}

Json externalResourceListJson(const std::vector<ExternalMetricInfo>& metrics) {
  Json resources = Json::array();
  for (const auto& info : metrics) {
    resources.push_back(resourceEntry(info.metric, info.namespaced, "ExternalMetricValueList"));
  }
  return resourceList(std::string(kExternalMetricsGroup) + "/v1beta1", std::move(resources));
}

Json apiGroupJson(const ApiGroupVersions& group) {
  Json out;
  out["kind"] = "APIGroup";
  out["apiVersion"] = "v1";
  addGroupFields(out, group);
  return out;
}

Json apiGroupListJson(const std::vector<ApiGroupVersions>& groups, std::string_view serverAddress) {
  Json list;
  list["kind"] = "APIGroupList";
  list["apiVersion"] = "v1";
  Json entries = Json::array();
  for (const auto& group : groups) {
    Json entry;
    addGroupFields(entry, group);
    Json address;
    address["clientCIDR"] = "0.0.0.0/0";
    address["serverAddress"] = serverAddress;
    entry["serverAddressByClientCIDRs"] = Json::array({std::move(address)});
    entries.push_back(std::move(entry));
  }
  list["groups"] = std::move(entries);
  return list;
}

Result<Json> labelSelectorJson(const core::LabelSelector& selector) {
  std::map<std::string, std::string> matchLabels;  // Go marshals map keys sorted
  Json matchExpressions = Json::array();
  for (const auto& requirement : selector.requirements()) {
    switch (requirement.op) {
      case SelectorOperator::kEquals:
      case SelectorOperator::kDoubleEquals:
        matchLabels[requirement.key] = requirement.values.empty() ? "" : requirement.values.front();
        continue;
      case SelectorOperator::kGreaterThan:
        return Status::plain("\"gt\" isn't supported in label selectors");
      case SelectorOperator::kLessThan:
        return Status::plain("\"lt\" isn't supported in label selectors");
      case SelectorOperator::kNotEquals:
        return Status::plain("\"!=\" is not a valid label selector operator");
      default:
        break;
    }
    Json expression;
    expression["key"] = requirement.key;
    expression["operator"] = std::string(expressionOperator(requirement.op));
    if (!requirement.values.empty()) expression["values"] = requirement.values;
    matchExpressions.push_back(std::move(expression));
  }
  Json out = Json::object();
  if (!matchLabels.empty()) {
    Json labels = Json::object();
    for (const auto& [key, value] : matchLabels) labels[key] = value;
    out["matchLabels"] = std::move(labels);
  }
  if (!matchExpressions.empty()) out["matchExpressions"] = std::move(matchExpressions);
  return out;
}

Result<Json> metricValueListJson(std::string_view version, const std::vector<MetricValue>& items) {
  const bool v1beta1 = version == "v1beta1";
  Json array = Json::array();
  for (const auto& item : items) {
    auto selector = selectorOrNull(item.selector);
    if (!selector) return selector.status();
    Json entry;
    entry["describedObject"] = objectReferenceJson(item.describedObject);
    if (v1beta1) {
      entry["metricName"] = item.metricName;
    } else {
      Json metric;
      metric["name"] = item.metricName;
      metric["selector"] = *selector;
      entry["metric"] = std::move(metric);
    }
    entry["timestamp"] = formatTimestamp(item.timestamp);
    if (item.windowSeconds) entry[v1beta1 ? "window" : "windowSeconds"] = *item.windowSeconds;
    entry["value"] = item.value.toString();
    if (v1beta1) entry["selector"] = std::move(*selector);
    array.push_back(std::move(entry));
  }
  return listEnvelope("MetricValueList",
                      std::string(kCustomMetricsGroup) + "/" + std::string(version),
                      std::move(array));
}

Json externalMetricValueListJson(const std::vector<ExternalMetricValue>& items) {
  Json array = Json::array();
  for (const auto& item : items) {
    Json entry;
    entry["metricName"] = item.metricName;
    if (item.metricLabels) {
      Json labels = Json::object();
      for (const auto& [key, value] : *item.metricLabels) labels[key] = value;
      entry["metricLabels"] = std::move(labels);
    } else {
      entry["metricLabels"] = nullptr;
    }
    entry["timestamp"] = formatTimestamp(item.timestamp);
    if (item.windowSeconds) entry["window"] = *item.windowSeconds;
    entry["value"] = item.value.toString();
    array.push_back(std::move(entry));
  }
  return listEnvelope("ExternalMetricValueList", std::string(kExternalMetricsGroup) + "/v1beta1",
                      std::move(array));
}

Json versionJson(const VersionInfo& info) {
  Json out;
  out["major"] = info.major;
  out["minor"] = info.minor;
  out["gitVersion"] = info.gitVersion;
  out["gitCommit"] = info.gitCommit;
  out["gitTreeState"] = info.gitTreeState;
  out["buildDate"] = info.buildDate;
  out["goVersion"] = info.goVersion;
  out["compiler"] = info.compiler;
  out["platform"] = info.platform;
  return out;
}

}  // namespace gpuscale::apiserver
