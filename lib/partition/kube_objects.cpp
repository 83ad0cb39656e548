// The readers of kube_objects.h for metadata, Nodes, ConfigMaps, ScaledObjects and
// Leases, and the walk over a dump's objects. Pods and workloads: pod_parse.cpp; workloads
// scaled through /scale: scale_parse.cpp; HPAs: hpa_parse.cpp.
#include "gpuscale/partition/kube_objects.h"

#include "gpuscale/core/quantity.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/dra_objects.h"
#include "gpuscale/partition/object_fields.h"
#include "gpuscale/partition/resource_names.h"
#include "object_meta.h"

namespace gpuscale::partition {
namespace {

using nlohmann::json;

std::string valueIn(const std::map<std::string, std::string>& map, std::string_view key) {
  auto it = map.find(std::string(key));
  return it == map.end() ? std::string() : it->second;
}

NodeObject parseNode(const json& item) {
  NodeObject n;
  n.meta = detail::parseMeta(item);
  const json& spec = fields::object(item, "spec");
  n.unschedulable = fields::boolean(spec, "unschedulable");
  for (const auto& t : fields::array(spec, "taints")) {
    n.taints.push_back({fields::string(t, "key"), fields::string(t, "value"),
                        fields::string(t, "effect"), fields::string(t, "timeAdded")});
  }
  const json& allocatable = fields::object(fields::object(item, "status"), "allocatable");
  for (const auto& [name, value] : allocatable.items()) {
    if (name.rfind(kNvidiaPrefix, 0) != 0) continue;
    n.allocatable[name] = detail::deviceCount(allocatable, name, "allocatable." + name);
  }
  return n;
}

void collect(const json& node, std::vector<KubeItem>& out) {
  if (node.is_array()) {
    for (const auto& child : node) collect(child, out);
  } else if (node.is_object() && node.contains("items")) {
    for (const auto& child : fields::array(node, "items")) collect(child, out);
  } else if (node.is_object()) {
    out.push_back({{}, &node});
  } else {
    fields::fail("item", "an object");
  }
}

}  // namespace

namespace detail {

ObjectParts parseParts(const json& object) {
  ObjectParts parts{parseMeta(object), fields::object(object, "spec"),
                    fields::object(object, "status")};
  if (parts.meta.ns.empty()) parts.meta.ns = "default";
  return parts;
}

std::int64_t deviceCount(const json& map, const std::string& key, const std::string& path) {
  auto q = core::Quantity::parse(fields::quantityText(map, key));
  if (!q || q->value() < 0) fields::fail(path, "a non-negative quantity");
  if (q->value() > kMaxDeviceCount) fields::fail(path, "at most 2^31", fields::Problem::kRange);
  return q->value();
}

ObjectMeta parseMeta(const json& object) {
  const json& meta = fields::object(object, "metadata");
  ObjectMeta m;
  m.ns = fields::string(meta, "namespace");
  m.name = fields::string(meta, "name");
  m.uid = fields::string(meta, "uid");
  m.resourceVersion = fields::string(meta, "resourceVersion");
  m.labels = fields::stringMap(meta, "labels");
  m.annotations = fields::stringMap(meta, "annotations");
  m.deleting = fields::find(meta, "deletionTimestamp") != nullptr;
  m.createdAt = core::parseRfc3339(fields::string(meta, "creationTimestamp"));
  return m;
}

}  // namespace detail

std::string ObjectMeta::label(std::string_view key) const { return valueIn(labels, key); }
std::string ObjectMeta::annotation(std::string_view key) const { return valueIn(annotations, key); }
std::string ConfigMapObject::value(std::string_view key) const { return valueIn(data, key); }

core::Result<ObjectMeta> readMeta(const json& object) {
  return fields::readFields("", [&] { return detail::parseMeta(object); });
}

core::Result<NodeObject> readNode(const json& object) {
  return fields::readFields("", [&] { return parseNode(object); });
}

core::Result<ConfigMapObject> readConfigMap(const json& object) {
  return fields::readFields("", [&] {
    return ConfigMapObject{detail::parseMeta(object), fields::stringMap(object, "data")};
  });
}

core::Result<ScaledObjectObject> readScaledObject(const json& object) {
  return fields::readFields("", [&] {
    const auto [meta, spec, status] = detail::parseParts(object);
    return ScaledObjectObject{meta, fields::int32(spec, "minReplicaCount", 0, 0),
                              fields::int32(spec, "maxReplicaCount", 100, 0),
                              fields::string(status, "hpaName")};
  });
}

core::Result<LeaseObject> readLease(const json& object) {
  return fields::readFields("", [&] {
    const json& spec = fields::object(object, "spec");
    LeaseObject l;
    l.meta = detail::parseMeta(object);
    l.holderIdentity = fields::string(spec, "holderIdentity");
    l.renewTime = fields::string(spec, "renewTime");
    if (fields::find(spec, "leaseDurationSeconds") != nullptr)
      l.leaseDurationSeconds = fields::int32(spec, "leaseDurationSeconds");
    l.leaseTransitions = fields::int32(spec, "leaseTransitions");
    return l;
  });
}

core::Result<std::vector<KubeItem>> collectKubeItems(const json& dump) {
  return fields::readFields("", [&] {
    std::vector<KubeItem> out;
    collect(dump, out);
    return out;
  });
}

ObjectMeta identityOf(const json& object) {
  ObjectMeta id;
  auto field = [&](const char* key) {
    auto r = fields::readFields(
        "", [&] { return fields::string(fields::object(object, "metadata"), key); });
    return r ? *r : std::string();
  };
  id.ns = field("namespace");
  id.name = field("name");
  id.uid = field("uid");
  return id;
}

SkippedObject skippedObject(std::string_view kind, const json& object, const core::Status& why) {
  const ObjectMeta id = identityOf(object);
  const std::string reason = why.reason();
  return {std::string(kind),
          id.ns,
          id.name,
          id.uid,
          reason == fields::kRangeReason    ? "out_of_range"
          : reason == kNoScaleReason        ? "no_scale"
          : reason == kDraUnsupportedReason ? "unsupported"
                                            : "malformed",
          why.message()};
}

std::string kindOf(const json& object) {
  const json* kind = fields::find(object, "kind");
  return kind != nullptr && kind->is_string() ? kind->get<std::string>() : std::string();
}

}  // namespace gpuscale::partition
