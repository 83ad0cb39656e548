#include "gpuscale/sim/dra_driver.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "gpuscale/core/metric_families.h"
#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/sim/dra_devices.h"

namespace gpuscale::sim {
namespace {

using kube::Object;

const kube::ResourceRef kSlices{"resource.k8s.io", "v1", "resourceslices", "", "", ""};
const kube::ResourceRef kClasses{"resource.k8s.io", "v1", "deviceclasses", "", "", ""};

kube::ResourceRef claims(const std::string& ns) {
  return {"resource.k8s.io", "v1", "resourceclaims", ns, "", ""};
}

// The minor of a gitVersion such as "v1.36.5"; 0 when it does not parse.
int minorOf(const std::string& gitVersion) {
  const auto dot = gitVersion.find('.');
  if (dot == std::string::npos) return 0;
  int minor = 0;
  std::from_chars(gitVersion.data() + dot + 1, gitVersion.data() + gitVersion.size(), minor);
  return minor;
}

// The name of the ResourceClaim behind pod claim `podClaim`: given directly, or generated from a
// template and recorded in the pod's status by the resourceclaim controller ("" until then).
std::string claimNameOf(const Object& pod, const Object& podClaim) {
  if (auto direct = k8s::stringField(podClaim, "resourceClaimName"); !direct.empty()) return direct;
  const std::string name = k8s::stringField(podClaim, "name");
  const Object& status = k8s::objectField(pod, "status");
  auto it = status.find("resourceClaimStatuses");
  if (it == status.end() || !it->is_array()) return "";
  for (const auto& s : *it) {
    if (k8s::stringField(s, "name") == name) return k8s::stringField(s, "resourceClaimName");
  }
  return "";
}

// What device `device` (a published device object) is in the device plugin's units, on which GPU.
DraDriver::HeldDevice heldDeviceOf(const Object& device) {
  const std::string name = k8s::stringField(device, "name");
  const Object& attrs = k8s::objectField(device, "attributes");
  auto attr = [&](const char* key) {
    return k8s::stringField(k8s::objectField(attrs, key), "string");
  };
  const auto parsed = parseDraDeviceName(name);
  return {parsed ? parsed->gpu : 0,
          attr("type") == "mig" ? "nvidia.com/mig-" + attr("profile") : "nvidia.com/gpu"};
}

bool reservedFor(const Object& claim, const std::string& podUid) {
  const Object& status = k8s::objectField(claim, "status");
  auto it = status.find("reservedFor");
  if (it == status.end() || !it->is_array()) return false;
  return std::any_of(it->begin(), it->end(), [&](const Object& r) {
    return k8s::stringField(r, "resource") == "pods" && k8s::stringField(r, "uid") == podUid;
  });
}

}  // namespace

DraDriver::DraDriver(std::shared_ptr<kube::KubeClient> client, prometheus::Registry& registry)
    : client_(std::move(client)),
      sliceWrites_(core::counterFamily(registry, "gpuscale_sim_dra_slice_writes_total",
                                       "ResourceSlice writes of the emulated DRA driver, by verb")),
      prepared_(core::counter(registry, "gpuscale_sim_dra_prepared_pods_total",
                              "Pods whose ResourceClaims the emulated kubelet plugin prepared")),
      prepareErrors_(
          core::counterFamily(registry, "gpuscale_sim_dra_prepare_errors_total",
                              "Pods whose ResourceClaims could not be prepared, by reason")) {}

core::Status DraDriver::start() {
  auto version = client_->getPath("/version");
  if (!version.ok()) return version.status().withContext("read the API server's version");
  const int minor = minorOf(k8s::stringField(*version, "gitVersion"));
  splitCounters_ = minor == 0 || minor >= 35;
  for (const auto& deviceClass : draDeviceClasses()) {
    auto r = client_->create(kClasses, deviceClass);
    const std::string name = deviceClass["metadata"]["name"];
    if (r.ok()) {
      spdlog::info("created DeviceClass {}", name);
    } else if (k8s::isConflict(r.status())) {
      spdlog::info("DeviceClass {} exists; kept as is", name);
    } else {
      return r.status().withContext("create DeviceClass " + name);
    }
  }
  return {};
}

void DraDriver::reconcileNode(const GpuNodeSpec& spec,
                              const std::vector<partition::MigGpuSetting>& gpus,
                              const kube::Object& node,
                              const std::vector<std::shared_ptr<const kube::Object>>& pods) {
  Pool& pool = pools_[spec.name];
  std::vector<Object> slices;
  std::map<std::string, HeldDevice> devices;
  for (auto& s : draSlices(spec, gpus, splitCounters_)) {
    for (const auto& d : s.devices) devices.emplace(d["name"].get<std::string>(), heldDeviceOf(d));
    slices.push_back(
        {{"devices", std::move(s.devices)}, {"sharedCounters", std::move(s.sharedCounters)}});
  }
  const std::string content = Object(slices).dump();
  if (content != pool.published) {
    if (auto s = publish(spec, node, slices); s.ok()) {
      pool.published = content;
      pool.devices = std::move(devices);
      spdlog::info("node {}: dra: published {} device(s) in {} ResourceSlice(s)", spec.name,
                   pool.devices.size(), slices.size());
    } else {
      spdlog::warn("node {}: dra: publishing ResourceSlices: {}", spec.name, s.toString());
      return;
    }
  }
  std::set<std::string> onNode;
  for (const auto& pod : pods) {
    const Object& podSpec = k8s::objectField(*pod, "spec");
    if (k8s::stringField(podSpec, "nodeName") != spec.name) continue;
    const Object& meta = k8s::objectField(*pod, "metadata");
    const std::string uid = k8s::stringField(meta, "uid");
    onNode.insert(uid);
    if (meta.contains("deletionTimestamp") || pool.prepared.contains(uid)) continue;
    if (!k8s::annotationOf(*pod, kDraPreparedAnnotation).empty()) continue;
    auto rc = podSpec.find("resourceClaims");
    if (rc == podSpec.end() || !rc->is_array() || rc->empty()) continue;
    prepare(spec, pool, *pod);
  }
  std::erase_if(pool.prepared, [&](const std::string& uid) { return !onNode.contains(uid); });
  std::erase_if(pool.held, [&](const auto& entry) { return !onNode.contains(entry.first); });
}

std::vector<DraDriver::HeldDevice> DraDriver::heldDevices(const std::string& node,
                                                          const std::string& podUid) const {
  const auto pool = pools_.find(node);
  if (pool == pools_.end()) return {};
  const auto it = pool->second.held.find(podUid);
  return it == pool->second.held.end() ? std::vector<HeldDevice>{} : it->second;
}

core::Status DraDriver::publish(const GpuNodeSpec& spec, const kube::Object& node,
                                const std::vector<kube::Object>& slices) {
  kube::ListOptions options;
  options.fieldSelector = fmt::format("spec.nodeName={},spec.driver={}", spec.name, kDraDriver);
  auto existing = client_->list(kSlices, options);
  if (!existing.ok()) return existing.status().withContext("list ResourceSlices");
  std::int64_t generation = 0;
  for (const auto& s : existing->items) {
    const Object& pool = k8s::objectField(k8s::objectField(s, "spec"), "pool");
    if (auto it = pool.find("generation"); it != pool.end() && it->is_number_integer())
      generation = std::max(generation, it->get<std::int64_t>());
  }
  ++generation;
  std::sort(existing->items.begin(), existing->items.end(),
            [](const Object& a, const Object& b) { return k8s::nameOf(a) < k8s::nameOf(b); });
  const Object owner = {{"apiVersion", "v1"},
                        {"kind", "Node"},
                        {"name", spec.name},
                        {"uid", k8s::stringField(k8s::objectField(node, "metadata"), "uid")},
                        {"controller", true}};
  for (std::size_t i = 0; i < slices.size(); ++i) {
    Object body = {
        {"driver", kDraDriver},
        {"nodeName", spec.name},
        {"pool",
         {{"name", spec.name}, {"generation", generation}, {"resourceSliceCount", slices.size()}}}};
    for (const char* key : {"devices", "sharedCounters"}) {
      if (!slices[i][key].empty()) body[key] = slices[i][key];
    }
    if (i < existing->items.size()) {
      Object object = existing->items[i];
      object["spec"] = std::move(body);
      auto r = client_->update(kSlices.named(k8s::nameOf(object)), object);
      if (!r.ok()) return r.status().withContext("update ResourceSlice " + k8s::nameOf(object));
      sliceWrites_.Add({{"verb", "update"}}).Increment();
    } else {
      const Object object = {{"apiVersion", "resource.k8s.io/v1"},
                             {"kind", "ResourceSlice"},
                             {"metadata",
                              {{"generateName", fmt::format("{}-{}-", spec.name, kDraDriver)},
                               {"ownerReferences", Object::array({owner})}}},
                             {"spec", std::move(body)}};
      auto r = client_->create(kSlices, object);
      if (!r.ok()) return r.status().withContext("create ResourceSlice");
      sliceWrites_.Add({{"verb", "create"}}).Increment();
    }
  }
  for (std::size_t i = slices.size(); i < existing->items.size(); ++i) {
    const std::string name = k8s::nameOf(existing->items[i]);
    auto s = client_->remove(kSlices.named(name));
    if (!s.ok() && !k8s::isNotFound(s)) return s.withContext("delete ResourceSlice " + name);
    sliceWrites_.Add({{"verb", "delete"}}).Increment();
  }
  return {};
}

void DraDriver::prepare(const GpuNodeSpec& spec, Pool& pool, const kube::Object& pod) {
  const std::string ns = k8s::namespaceOf(pod), name = k8s::nameOf(pod);
  const std::string uid = k8s::stringField(k8s::objectField(pod, "metadata"), "uid");
  auto fail = [&](std::string_view reason, const std::string& why) {
    if (!pool.reported.insert(uid).second) return;
    spdlog::warn("node {}: dra: cannot prepare pod {}/{}: {}", spec.name, ns, name, why);
    prepareErrors_.Add({{"reason", std::string(reason)}}).Increment();
  };
  std::vector<std::string> held;
  std::vector<HeldDevice> units;
  for (const auto& podClaim : k8s::objectField(pod, "spec").at("resourceClaims")) {
    const std::string claimName = claimNameOf(pod, podClaim);
    if (claimName.empty()) return;  // the resourceclaim controller has not made it yet
    auto claim = client_->get(claims(ns).named(claimName));
    if (!claim.ok()) {
      fail("claim", fmt::format("claim {}: {}", claimName, claim.status().toString()));
      return;
    }
    const Object& allocation = k8s::objectField(k8s::objectField(*claim, "status"), "allocation");
    const Object& results = k8s::objectField(allocation, "devices");
    auto it = results.find("results");
    if (it == results.end() || !it->is_array() || !reservedFor(*claim, uid)) {
      fail("unallocated", fmt::format("claim {} is not allocated and reserved for it", claimName));
      return;
    }
    for (const auto& r : *it) {
      if (k8s::stringField(r, "driver") != kDraDriver) continue;
      const std::string device = k8s::stringField(r, "device");
      if (k8s::stringField(r, "pool") != spec.name || !pool.devices.contains(device)) {
        fail("device", fmt::format("claim {}: device {}/{} is not published on this node",
                                   claimName, k8s::stringField(r, "pool"), device));
        return;
      }
      held.push_back(device);
      units.push_back(pool.devices.at(device));
    }
  }
  const Object patch = {{"metadata", {{"annotations", {{kDraPreparedAnnotation, "true"}}}}}};
  auto r = client_->patch(kube::ResourceRef{"", "v1", "pods", ns, name, ""},
                          kube::PatchType::kMerge, patch);
  if (!r.ok()) {
    spdlog::warn("node {}: dra: annotate pod {}/{}: {}", spec.name, ns, name,
                 r.status().toString());
    return;
  }
  pool.prepared.insert(uid);
  pool.held[uid] = std::move(units);
  prepared_.Increment();
  spdlog::info("node {}: dra: prepared pod {}/{}: {}", spec.name, ns, name, fmt::join(held, ", "));
}

}  // namespace gpuscale::sim
