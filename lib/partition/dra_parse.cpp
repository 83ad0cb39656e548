// The readers of dra_objects.h: ResourceSlices, DeviceClasses, ResourceClaimTemplates and
// ResourceClaims, and what an informer keeps of them.
#include "gpuscale/core/quantity.h"
#include "gpuscale/partition/dra_objects.h"
#include "gpuscale/partition/object_fields.h"
#include "object_meta.h"

namespace gpuscale::partition {
namespace {

using nlohmann::json;

// A counter or capacity value: a quantity in whole units (rounded up), at least 0.
std::int64_t counterValue(const json& counter, const std::string& path) {
  auto q = core::Quantity::parse(fields::quantityText(counter, "value"));
  if (!q || q->value() < 0) fields::fail(path, "a non-negative quantity");
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

DraValue attributeValue(const json& v, const std::string& path) {
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
    fields::fail(path, "one of string, version, int or bool");
  }
  return out;
}

DraDevice parseDevice(const json& d, const std::string& driver) {
  DraDevice out;
  out.name = fields::string(d, "name");
  const std::string path = "spec.devices[" + out.name + "]";
  for (const auto& [name, v] : fields::object(d, "attributes").items()) {
    out.attributes[qualified(name, driver)] = attributeValue(v, path + ".attributes." + name);
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
  for (const auto& d : fields::array(spec, "devices")) s.devices.push_back(parseDevice(d, s.driver));
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
  out.count = fields::integer(r, "count", 1, 0);
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

// `paths` of `from` copied into a new object (each path a list of keys); absent ones left out.
json keep(const json& from, std::initializer_list<std::initializer_list<const char*>> paths) {
  json out = json::object();
  for (const auto& path : paths) {
    const json* at = &from;
    json* to = &out;
    bool found = true;
    for (const char* key : path) {
      if (!at->is_object() || !at->contains(key)) {
        found = false;
        break;
      }
      at = &(*at)[key];
    }
    if (!found) continue;
    for (const char* key : path) to = &(*to)[key];
    *to = *at;
  }
  return out;
}

json trimmedMeta(const json& object) {
  return keep(object, {{"apiVersion"},
                       {"kind"},
                       {"metadata", "name"},
                       {"metadata", "namespace"},
                       {"metadata", "uid"},
                       {"metadata", "resourceVersion"},
                       {"metadata", "deletionTimestamp"}});
}

void copyPaths(const json& from, json& to,
               std::initializer_list<std::initializer_list<const char*>> paths) {
  to.merge_patch(keep(from, paths));
}

}  // namespace

const DraValue* DraDevice::attribute(std::string_view driver, std::string_view name) const {
  std::string key(driver);
  key.append("/").append(name);
  auto it = attributes.find(key);
  return it == attributes.end() ? nullptr : &it->second;
}

core::Result<ResourceSliceObject> readResourceSlice(const json& object) {
  return fields::readFields("", [&] { return parseSlice(object); });
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

json trimDraObject(std::string_view kind, const json& object) {
  if (!object.is_object()) return object;
  json out = trimmedMeta(object);
  if (kind == "ResourceSlice") {
    copyPaths(object, out,
              {{"spec", "driver"},
               {"spec", "pool"},
               {"spec", "nodeName"},
               {"spec", "devices"},
               {"spec", "sharedCounters"}});
    // Of each device only what parseDevice reads.
    if (auto* devices = out.contains("spec") ? &out["spec"] : nullptr;
        devices != nullptr && devices->contains("devices") && (*devices)["devices"].is_array()) {
      for (auto& d : (*devices)["devices"]) {
        d = keep(d, {{"name"},
                     {"attributes"},
                     {"capacity"},
                     {"consumesCounters"},
                     {"allowMultipleAllocations"}});
      }
    }
  } else if (kind == "DeviceClass") {
    copyPaths(object, out, {{"spec", "selectors"}, {"spec", "extendedResourceName"}});
  } else if (kind == "ResourceClaimTemplate") {
    copyPaths(object, out, {{"spec", "spec", "devices"}});
  } else if (kind == "ResourceClaim") {
    copyPaths(object, out,
              {{"spec", "devices"},
               {"status", "allocation", "devices", "results"},
               {"status", "reservedFor"}});
  } else {
    return object;
  }
  return out;
}

}  // namespace gpuscale::partition
