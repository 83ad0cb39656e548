#include "gpuscale/sim/node_objects.h"

namespace gpuscale::sim {
namespace {

const kube::Object& member(const kube::Object& object, const char* key) {
  static const kube::Object kEmpty = kube::Object::object();
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

// The patch of one resource map: changed counts, and null for nvidia.com/* names no longer wanted.
kube::Object resourceDiff(const kube::Object& have, const ResourceCounts& want) {
  kube::Object out = kube::Object::object();
  for (const auto& [name, n] : want) {
    auto it = have.find(name);
    if (it == have.end() || *it != std::to_string(n)) out[name] = std::to_string(n);
  }
  for (const auto& [name, v] : have.items()) {
    if (name.starts_with("nvidia.com/") && !want.contains(name)) out[name] = nullptr;
  }
  return out;
}

}  // namespace

kube::Object resourcesJson(const ResourceCounts& counts) {
  kube::Object out = kube::Object::object();
  for (const auto& [name, n] : counts) out[name] = std::to_string(n);
  return out;
}

kube::Object newNodeObject(const GpuNodeSpec& spec, const Labels& labels,
                           const NodeAdvertisement& adv, const std::string& kwokAnnotationKey,
                           const std::string& kwokAnnotationValue) {
  kube::Object allLabels = {{"type", "kwok"},
                            {"kubernetes.io/hostname", spec.name},
                            {"kubernetes.io/os", "linux"},
                            {"kubernetes.io/arch", "amd64"}};
  for (const auto& [k, v] : spec.labels) allLabels[k] = v;
  for (const auto& [k, v] : labels) allLabels[k] = v;
  kube::Object capacity = resourcesJson(adv.capacity);
  kube::Object allocatable = resourcesJson(adv.allocatable);
  for (auto* r : {&capacity, &allocatable}) {
    (*r)["cpu"] = spec.cpu;
    (*r)["memory"] = spec.memory;
    (*r)["pods"] = spec.pods;
  }
  kube::Object nodeInfo = {{"architecture", "amd64"},
                           {"operatingSystem", "linux"},
                           {"kubeletVersion", "fake"},
                           {"kubeProxyVersion", "fake"}};
  for (const char* empty : {"bootID", "containerRuntimeVersion", "kernelVersion", "machineID",
                            "osImage", "systemUUID"}) {
    nodeInfo[empty] = "";
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", spec.name},
            {"labels", allLabels},
            {"annotations",
             {{kwokAnnotationKey, kwokAnnotationValue}, {"node.alpha.kubernetes.io/ttl", "0"}}}}},
          {"spec", {{"providerID", "kwok://" + spec.name}}},
          {"status",
           {{"capacity", capacity},
            {"allocatable", allocatable},
            {"phase", "Running"},
            {"nodeInfo", nodeInfo}}}};
}

kube::Object labelPatch(const kube::Object& node, const Labels& desired) {
  const kube::Object& current = member(member(node, "metadata"), "labels");
  kube::Object patch = kube::Object::object();
  for (const auto& [k, v] : desired) {
    auto it = current.find(k);
    if (it == current.end() || *it != v) patch[k] = v;
  }
  for (const auto& [k, v] : current.items()) {
    if (isGfdLabel(k) && !desired.contains(k)) patch[k] = nullptr;
  }
  return patch;
}

kube::Object statusPatch(const kube::Object& node, const NodeAdvertisement& adv) {
  const kube::Object& status = member(node, "status");
  kube::Object patch = kube::Object::object();
  if (auto d = resourceDiff(member(status, "capacity"), adv.capacity); !d.empty()) {
    patch["capacity"] = d;
  }
  if (auto d = resourceDiff(member(status, "allocatable"), adv.allocatable); !d.empty()) {
    patch["allocatable"] = d;
  }
  return patch;
}

}  // namespace gpuscale::sim
