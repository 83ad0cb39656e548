// Reading an autoscaling/v2 HorizontalPodAutoscaler (kube_objects.h: readHpa): spec, status,
// conditions, and the metrics with their targets and current values, as the HPA controller reads
// them.
#include <map>

#include "gpuscale/core/quantity.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/object_fields.h"
#include "object_meta.h"

namespace gpuscale::partition {
namespace {

using nlohmann::json;

// The member of a metric (spec or status) that holds its source, per metric type.
const std::map<std::string, std::string, std::less<>>& sourceFields() {
  static const std::map<std::string, std::string, std::less<>> kFields{
      {"Pods", "pods"},
      {"Resource", "resource"},
      {"ContainerResource", "containerResource"},
      {"Object", "object"},
      {"External", "external"}};
  return kFields;
}

// "" for a type this reader does not know (the API admits only the five above).
std::string sourceField(const std::string& type) {
  auto it = sourceFields().find(type);
  return it == sourceFields().end() ? std::string() : it->second;
}

// What identifies a metric within its HPA (and pairs a spec metric with its current value).
std::string metricKey(const json& source, const std::string& type) {
  if (type == "Resource") return fields::string(source, "name");
  if (type == "ContainerResource")
    return fields::string(source, "name") + "/" + fields::string(source, "container");
  std::string key = fields::string(fields::object(source, "metric"), "name");
  if (type == "Object")
    key += "/" + fields::string(fields::object(source, "describedObject"), "name");
  return key;
}

// The target the HPA controller computes with (kube_objects.h: readHpa), as {type, field}; an
// empty type when it would fail the metric.
std::pair<std::string, std::string> effectiveTarget(const std::string& metricType,
                                                    const json& target) {
  const bool value = fields::find(target, "value") != nullptr;
  const bool averageValue = fields::find(target, "averageValue") != nullptr;
  const bool utilization = fields::find(target, "averageUtilization") != nullptr;
  if (metricType == "Resource" || metricType == "ContainerResource") {
    if (averageValue) return {"AverageValue", "averageValue"};
    if (utilization) return {"Utilization", "averageUtilization"};
  } else if (metricType == "Pods") {
    if (averageValue) return {"AverageValue", "averageValue"};
  } else if (metricType == "External") {
    if (averageValue) return {"AverageValue", "averageValue"};
    if (value) return {"Value", "value"};
  } else if (metricType == "Object") {
    const std::string type = fields::string(target, "type");
    if (type == "Value" && value) return {"Value", "value"};
    if (type == "AverageValue" && averageValue) return {"AverageValue", "averageValue"};
  }
  return {};
}

// The number in `values[field]`: a percentage for averageUtilization, else a quantity.
double metricNumber(const json& values, const std::string& field) {
  if (field == "averageUtilization")
    return static_cast<double>(fields::int32(values, "averageUtilization"));
  auto q = core::Quantity::parse(fields::quantityText(values, field));
  if (!q) fields::fail(field, "a quantity");
  return q->toDouble();
}

HpaMetric parseMetric(const json& m, const json& status) {
  HpaMetric metric;
  metric.type = fields::string(m, "type");
  const std::string field = sourceField(metric.type);
  if (field.empty()) return metric;  // no source this reader knows: proposes nothing
  const json& source = fields::object(m, field);
  metric.key = metricKey(source, metric.type);
  const auto [targetType, targetField] =
      effectiveTarget(metric.type, fields::object(source, "target"));
  if (targetType.empty()) return metric;  // the controller fails this metric: nothing proposed
  metric.targetType = targetType;
  metric.target = metricNumber(fields::object(source, "target"), targetField);
  for (const auto& cm : fields::array(status, "currentMetrics")) {
    if (fields::string(cm, "type") != metric.type) continue;
    const json& current = fields::object(cm, field);
    if (metricKey(current, metric.type) != metric.key) continue;
    const json& values = fields::object(current, "current");
    if (fields::find(values, targetField) != nullptr)
      metric.current = metricNumber(values, targetField);
  }
  return metric;
}

HpaState parseHpa(const json& item) {
  const auto [meta, spec, status] = detail::parseParts(item);
  HpaState h;
  detail::copyIdentity(meta, h);
  for (const auto& owner : fields::array(fields::object(item, "metadata"), "ownerReferences")) {
    if (!fields::boolean(owner, "controller")) continue;
    h.controller =
        OwnerReference{fields::string(owner, "apiVersion"), fields::string(owner, "kind"),
                       fields::string(owner, "name"), fields::string(owner, "uid")};
  }
  const json& ref = fields::object(spec, "scaleTargetRef");
  h.targetApiVersion = fields::string(ref, "apiVersion");
  h.targetKind = fields::string(ref, "kind", "Deployment");
  h.targetName = fields::string(ref, "name");
  h.minReplicas = fields::int32(spec, "minReplicas", 1, 0);
  h.maxReplicas = fields::int32(spec, "maxReplicas", 1, 0);
  h.currentReplicas = fields::int32(status, "currentReplicas", 0, 0);
  h.desiredReplicas = fields::int32(status, "desiredReplicas", 0, 0);
  for (const auto& c : fields::array(status, "conditions")) {
    h.conditions.push_back(
        {fields::string(c, "type"), fields::string(c, "status"), fields::string(c, "reason")});
  }
  auto tolerance = fields::quantityText(fields::object(fields::object(spec, "behavior"), "scaleUp"),
                                        "tolerance");
  if (!tolerance.empty()) {
    if (auto q = core::Quantity::parse(tolerance)) h.scaleUpTolerance = q->toDouble();
  }
  for (const auto& m : fields::array(spec, "metrics")) h.metrics.push_back(parseMetric(m, status));
  return h;
}

}  // namespace

core::Result<HpaState> readHpa(const json& object) {
  return fields::readFields("", [&] { return parseHpa(object); });
}

}  // namespace gpuscale::partition
