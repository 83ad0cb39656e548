#include "hpa_parse.h"

#include <map>

#include "json_fields.h"
#include "quantity.h"

namespace gpuscale::partition::detail {
namespace {

namespace jf = json_fields;
using nlohmann::json;

std::string metricKey(const json& m, const std::string& type) {
  if (type == "Resource") return jf::string(jf::object(m, "resource"), "name");
  if (type == "ContainerResource") {
    const json& r = jf::object(m, "containerResource");
    return jf::string(r, "name") + "/" + jf::string(r, "container");
  }
  std::string field = type == "Pods" ? "pods" : type == "Object" ? "object" : "external";
  const json& body = jf::object(m, field);
  std::string key = jf::string(jf::object(body, "metric"), "name");
  if (type == "Object") key += "/" + jf::string(jf::object(body, "describedObject"), "name");
  return key;
}

const json& metricBody(const json& m, const std::string& type) {
  static const std::map<std::string, std::string> kFields{
      {"Pods", "pods"},
      {"Resource", "resource"},
      {"ContainerResource", "containerResource"},
      {"Object", "object"},
      {"External", "external"}};
  auto it = kFields.find(type);
  if (it == kFields.end())
    jf::fail("metrics[].type", "Pods, Resource, ContainerResource, Object or External");
  return jf::object(m, it->second);
}

double metricNumber(const json& values, std::string_view targetType) {
  if (targetType == "Utilization")
    return static_cast<double>(jf::integer(values, "averageUtilization"));
  auto q =
      parseQuantity(jf::quantityText(values, targetType == "Value" ? "value" : "averageValue"));
  if (!q) jf::fail(targetType == "Value" ? "value" : "averageValue", "a quantity");
  return *q;
}

}  // namespace

HpaState parseHpa(const json& item) {
  const json& meta = jf::object(item, "metadata");
  const json& spec = jf::object(item, "spec");
  const json& status = jf::object(item, "status");
  HpaState h;
  h.ns = jf::string(meta, "namespace", "default");
  h.name = jf::string(meta, "name");
  h.uid = jf::string(meta, "uid", "");
  h.labels = jf::stringMap(meta, "labels");
  h.annotations = jf::stringMap(meta, "annotations");
  const json& ref = jf::object(spec, "scaleTargetRef");
  h.targetKind = jf::string(ref, "kind", "Deployment");
  h.targetName = jf::string(ref, "name");
  h.minReplicas = static_cast<int>(jf::integer(spec, "minReplicas", 1));
  h.maxReplicas = static_cast<int>(jf::integer(spec, "maxReplicas", 1));
  h.currentReplicas = static_cast<int>(jf::integer(status, "currentReplicas"));
  h.desiredReplicas = static_cast<int>(jf::integer(status, "desiredReplicas"));
  for (const auto& c : jf::array(status, "conditions")) {
    h.conditions.push_back(
        {jf::string(c, "type"), jf::string(c, "status"), jf::string(c, "reason")});
  }
  auto tolerance =
      jf::quantityText(jf::object(jf::object(spec, "behavior"), "scaleUp"), "tolerance");
  if (!tolerance.empty()) h.scaleUpTolerance = parseQuantity(tolerance);
  for (const auto& m : jf::array(spec, "metrics")) {
    HpaMetric metric;
    metric.type = jf::string(m, "type");
    metric.key = metricKey(m, metric.type);
    const json& target = jf::object(metricBody(m, metric.type), "target");
    metric.targetType = jf::string(target, "type");
    metric.target = metricNumber(target, metric.targetType);
    for (const auto& cm : jf::array(status, "currentMetrics")) {
      if (jf::string(cm, "type") != metric.type || metricKey(cm, metric.type) != metric.key)
        continue;
      const json& current = jf::object(metricBody(cm, metric.type), "current");
      if (jf::find(current, metric.targetType == "Utilization" ? "averageUtilization"
                            : metric.targetType == "Value"     ? "value"
                                                               : "averageValue") != nullptr) {
        metric.current = metricNumber(current, metric.targetType);
      }
    }
    h.metrics.push_back(std::move(metric));
  }
  return h;
}

}  // namespace gpuscale::partition::detail
