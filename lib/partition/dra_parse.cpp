// The readers of dra_objects.h: ResourceSlices, DeviceClasses, ResourceClaimTemplates and
// ResourceClaims.
#include <optional>

#include "gpuscale/core/quantity.h"
#include "gpuscale/partition/dra_objects.h"
#include "gpuscale/partition/object_fields.h"
#include "object_meta.h"

namespace gpuscale::partition {
namespace {

using nlohmann::json;

// Counter values beyond this (a pebibyte of memory) are not modelled: sums of them stay far from
// overflowing.
constexpr std::int64_t kMaxCounter = std::int64_t{1} << 50;

// A counter value: a quantity in whole units (rounded up), in [0, kMaxCounter].
std::int64_t counterValue(const json& counter, const std::string& path) {
  auto q = core::Quantity::parse(fields::quantityText(counter, "value"));
  if (!q || q->value() < 0) fields::fail(path, "a non-negative quantity");
  if (q->value() > kMaxCounter) fields::fail(path, "at most 2^50", fields::Problem::kRange);
  return q->value();
}

std::map<std::string, std::int64_t> counterMap(const json& counters, const std::string& path) {
  std::map<std::string, std::int64_t> out;
  for (const auto& [name, value] : counters.items()) {
    out[name] = counterValue(value, path + "." + name);
  }
  return out;
}

std::string qualified(const std::string& name, const std::string& driver) {
  return name.find('/') == std::string::npos ? driver + "/" + name : name;
}

// One attribute's value; nullopt for a type the planner does not model (the list types of
// DRAListTypeAttributes, or a type a newer API adds): the attribute is left out.
std::optional<DraValue> attributeValue(const json& v) {
  DraValue out;
  if (fields::find(v, "string") != nullptr) {
    out.type = DraValue::Type::kString;
    out.text = fields::string(v, "string");
  } else if (fields::find(v, "version") != nullptr) {
    out.type = DraValue::Type::kVersion;
    out.text = fields::string(v, "version");
  } else if (fields::find(v, "int") != nullptr) {
    out.type = DraValue::Type::kInt;
    out.number = fields::integer(v, "int");
  } else if (fields::find(v, "bool") != nullptr) {
    out.type = DraValue::Type::kBool;
    out.flag = fields::boolean(v, "bool");
  } else {
    return std::nullopt;
  }
  return out;
}

// Whether a taint keeps claims off the device: NoSchedule or NoExecute (None only informs).
bool blocksAllocation(const json& taint) {
  const std::string effect = fields::string(taint, "effect");
  return effect == "NoSchedule" || effect == "NoExecute";
}

DraDevice parseDevice(const json& d, const std::string& driver) {
  DraDevice out;
  out.name = fields::string(d, "name");
  const std::string path = "spec.devices[" + out.name + "]";
  for (const auto& [name, v] : fields::object(d, "attributes").items()) {
    if (!v.is_object()) fields::fail(path + ".attributes." + name, "an object");
    if (auto value = attributeValue(v)) out.attributes[qualified(name, driver)] = *value;
  }
  for (const auto& [name, v] : fields::object(d, "capacity").items()) {
    out.capacity[qualified(name, driver)] = fields::quantityText(v, "value");
  }
  for (const auto& use : fields::array(d, "consumesCounters")) {
    out.consumesCounters.push_back(
        {fields::string(use, "counterSet"),
         counterMap(fields::object(use, "counters"), path + ".consumesCounters")});
  }
  out.allowMultipleAllocations = fields::boolean(d, "allowMultipleAllocations");
  for (const auto& t : fields::array(d, "taints")) out.tainted = out.tainted || blocksAllocation(t);
  return out;
}

ResourceSliceObject parseSlice(const json& item) {
  ResourceSliceObject s;
  s.meta = detail::parseMeta(item);
  const json& spec = fields::object(item, "spec");
  s.driver = fields::string(spec, "driver");
  const json& pool = fields::object(spec, "pool");
  s.pool = fields::string(pool, "name");
  s.generation = fields::integer(pool, "generation");
  s.sliceCount = fields::integer(pool, "resourceSliceCount", 1, 1);
  s.nodeName = fields::string(spec, "nodeName");
  for (const auto& d : fields::array(spec, "devices"))
    s.devices.push_back(parseDevice(d, s.driver));
  for (const auto& c : fields::array(spec, "sharedCounters")) {
    s.sharedCounters.push_back({fields::string(c, "name"),
                                counterMap(fields::object(c, "counters"), "spec.sharedCounters")});
  }
  return s;
}

std::vector<std::string> celSelectors(const json& owner) {
  std::vector<std::string> out;
  for (const auto& s : fields::array(owner, "selectors")) {
    out.push_back(fields::string(fields::object(s, "cel"), "expression"));
  }
  return out;
}

DraDeviceRequest parseDeviceRequest(const json& r, std::string name) {
  DraDeviceRequest out;
  out.name = std::move(name);
  out.deviceClassName = fields::string(r, "deviceClassName");
  out.selectors = celSelectors(r);
  out.allocationMode = fields::string(r, "allocationMode", "ExactCount");
  // The API allows at most 32 devices per claim.
  out.count = fields::integer(r, "count", 1, 0, 1 << 16);
  out.adminAccess = fields::boolean(r, "adminAccess");
  out.consumesCapacity = !fields::object(fields::object(r, "capacity"), "requests").empty();
  return out;
}

DraClaimSpec parseClaimSpec(const json& spec) {
  DraClaimSpec out;
  const json& devices = fields::object(spec, "devices");
  for (const auto& r : fields::array(devices, "requests")) {
    DraClaimRequest request;
    request.name = fields::string(r, "name");
    if (fields::find(r, "exactly") != nullptr) {
      request.alternatives.push_back(
          parseDeviceRequest(fields::object(r, "exactly"), request.name));
    } else if (!fields::array(r, "firstAvailable").empty()) {
      request.firstAvailable = true;
      for (const auto& sub : fields::array(r, "firstAvailable")) {
        request.alternatives.push_back(
            parseDeviceRequest(sub, request.name + "/" + fields::string(sub, "name")));
      }
    } else {
      // resource.k8s.io/v1beta1 kept the request's fields inline.
      request.alternatives.push_back(parseDeviceRequest(r, request.name));
    }
    out.requests.push_back(std::move(request));
  }
  out.constraints = !fields::array(devices, "constraints").empty();
  return out;
}

ResourceClaimObject parseClaim(const json& item) {
  const auto [meta, spec, status] = detail::parseParts(item);
  ResourceClaimObject c;
  c.meta = meta;
  c.spec = parseClaimSpec(spec);
  const json& allocation = fields::object(status, "allocation");
  for (const auto& r : fields::array(fields::object(allocation, "devices"), "results")) {
    c.allocated.push_back({fields::string(r, "request"), fields::string(r, "driver"),
                           fields::string(r, "pool"), fields::string(r, "device")});
  }
  for (const auto& consumer : fields::array(status, "reservedFor")) {
    if (fields::string(consumer, "resource") == "pods")
      c.reservedForPods.push_back(fields::string(consumer, "name"));
  }
  return c;
}

}  // namespace

const DraValue* DraDevice::attribute(std::string_view driver, std::string_view name) const {
  std::string key(driver);
  key.append("/").append(name);
  auto it = attributes.find(key);
  return it == attributes.end() ? nullptr : &it->second;
}

core::Result<ResourceSliceObject> readResourceSlice(const json& object) {
  auto slice = fields::readFields("", [&] { return parseSlice(object); });
  if (slice && slice->driver == kNvidiaGpuDriver && slice->nodeName.empty()) {
    return core::Status(
        422, std::string(kDraUnsupportedReason),
        "spec.nodeName: a gpu.nvidia.com slice for more than one node (nodeSelector, "
        "allNodes or perDeviceNodeSelection) is not counted; the driver publishes "
        "one pool per node");
  }
  return slice;
}

core::Result<DeviceClassObject> readDeviceClass(const json& object) {
  return fields::readFields("", [&] {
    DeviceClassObject c;
    c.meta = detail::parseMeta(object);
    const json& spec = fields::object(object, "spec");
    c.selectors = celSelectors(spec);
    c.extendedResourceName = fields::string(spec, "extendedResourceName");
    return c;
  });
}

core::Result<ResourceClaimTemplateObject> readResourceClaimTemplate(const json& object) {
  return fields::readFields("", [&] {
    const auto parts = detail::parseParts(object);
    return ResourceClaimTemplateObject{parts.meta,
                                       parseClaimSpec(fields::object(parts.spec, "spec"))};
  });
}

core::Result<ResourceClaimObject> readResourceClaim(const json& object) {
  return fields::readFields("", [&] { return parseClaim(object); });
}

}  // namespace gpuscale::partition
