#include "gpuscale/sim/gpu_allocation.h"

#include <charconv>

#include "gpuscale/k8s/well_known_keys.h"

namespace gpuscale::sim {
namespace {

std::optional<int64_t> quantityUnits(const kube::Object& value) {
  // Extended resources are whole numbers ("1"); anything else is not a device count.
  if (value.is_number_integer()) return value.get<int64_t>();
  if (!value.is_string()) return std::nullopt;
  const auto& s = value.get_ref<const std::string&>();
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return n;
}

void addRequests(const kube::Object& resources, ResourceCounts& out) {
  ResourceCounts container;
  for (const char* kind : {"limits", "requests"}) {
    if (!resources.contains(kind) || !resources[kind].is_object()) continue;
    for (const auto& [name, value] : resources[kind].items()) {
      if (!name.starts_with("nvidia.com/")) continue;
      auto units = quantityUnits(value);
      if (units && *units > container[name]) container[name] = *units;
    }
  }
  for (const auto& [name, units] : container) out[name] += units;
}

}  // namespace

std::optional<PodGpuClaim> podGpuClaim(const kube::Object& pod, std::string_view nodeName) {
  const auto& spec = pod.value("spec", kube::Object::object());
  if (spec.value("nodeName", "") != nodeName) return std::nullopt;
  const std::string phase = pod.value("status", kube::Object::object()).value("phase", "");
  if (phase == "Succeeded" || phase == "Failed") return std::nullopt;
  PodGpuClaim claim;
  const auto& meta = pod.value("metadata", kube::Object::object());
  claim.uid = meta.value("uid", meta.value("namespace", "") + "/" + meta.value("name", ""));
  for (const auto& c : spec.value("containers", kube::Object::array())) {
    const bool before = claim.requests.empty();
    addRequests(c.value("resources", kube::Object::object()), claim.requests);
    if (before && !claim.requests.empty()) claim.container = c.value("name", "");
  }
  if (claim.requests.empty()) return std::nullopt;
  const auto& annotations = meta.value("annotations", kube::Object::object());
  if (auto it = annotations.find(k8s::kPinnedGpuAnnotation);
      it != annotations.end() && it->is_string()) {
    if (auto index = quantityUnits(*it)) claim.pinnedGpu = static_cast<int>(*index);
  }
  return claim;
}

void GpuAllocation::update(const std::vector<PodGpuClaim>& pods,
                           const std::vector<ResourceCounts>& unitsPerGpu) {
  std::map<std::string, std::set<int>> next;
  std::vector<ResourceCounts> free = unitsPerGpu;
  std::vector<const PodGpuClaim*> fresh;
  auto take = [&](int gpu, const ResourceCounts& requests) {
    for (const auto& [name, units] : requests) free[gpu][name] -= units;
  };
  for (const auto& pod : pods) {
    auto known = byPod_.find(pod.uid);
    if (known == byPod_.end()) {
      fresh.push_back(&pod);
      continue;
    }
    next[pod.uid] = known->second;
    if (known->second.size() == 1) take(*known->second.begin(), pod.requests);
  }
  const int gpus = static_cast<int>(unitsPerGpu.size());
  for (const PodGpuClaim* pod : fresh) {
    auto fits = [&](int gpu) {
      for (const auto& [name, units] : pod->requests) {
        auto it = free[gpu].find(name);
        if (it == free[gpu].end() || it->second < units) return false;
      }
      return true;
    };
    std::optional<int> chosen;
    if (pod->pinnedGpu && *pod->pinnedGpu >= 0 && *pod->pinnedGpu < gpus) {
      chosen = pod->pinnedGpu;
    } else {
      for (int g = 0; g < gpus && !chosen; ++g) {
        if (fits(g)) chosen = g;
      }
    }
    std::set<int>& held = next[pod->uid];
    if (chosen) {
      held.insert(*chosen);
      take(*chosen, pod->requests);
    } else {
      for (int g = 0; g < gpus; ++g) held.insert(g);
    }
  }
  byPod_ = std::move(next);
}

std::set<int> GpuAllocation::busyGpus() const {
  std::set<int> out;
  for (const auto& [uid, gpus] : byPod_) out.insert(gpus.begin(), gpus.end());
  return out;
}

std::set<int> GpuAllocation::gpusOf(const std::string& uid) const {
  auto it = byPod_.find(uid);
  return it == byPod_.end() ? std::set<int>{} : it->second;
}

}  // namespace gpuscale::sim
