#include "gpuscale/partition/resource_names.h"

#include <algorithm>

namespace gpuscale::partition {
namespace {

constexpr std::string_view kSharedSuffix = ".shared";

core::Result<std::map<std::string, std::int64_t>> physicalResources(
    const std::vector<MigGpuSetting>& gpus, MigStrategy strategy) {
  std::map<std::string, std::int64_t> out;
  if (strategy == MigStrategy::kNone) {
    if (!gpus.empty()) out[std::string(kGpuResource)] = static_cast<std::int64_t>(gpus.size());
    return out;
  }
  if (strategy == MigStrategy::kSingle) {
    bool anyMig = std::any_of(gpus.begin(), gpus.end(), [](const auto& g) { return g.migEnabled; });
    if (!anyMig) {
      if (!gpus.empty()) out[std::string(kGpuResource)] = static_cast<std::int64_t>(gpus.size());
      return out;
    }
    for (const auto& g : gpus) {
      if (!g.migEnabled || g.geometry.size() != 1 || g.geometry != gpus.front().geometry) {
        return core::Status::invalid(
            "the single MIG strategy needs every GPU MIG-enabled with the same one-profile "
            "geometry");
      }
      out[std::string(kGpuResource)] += instanceCount(g.geometry);
    }
    return out;
  }
  for (const auto& g : gpus) {
    if (!g.migEnabled) {
      ++out[std::string(kGpuResource)];
      continue;
    }
    for (const auto& [profile, count] : g.geometry) out[migResourceName(profile)] += count;
  }
  return out;
}

}  // namespace

std::string migResourceName(std::string_view profile) {
  std::string name(kMigResourcePrefix);
  for (char ch : profile) name += ch == '+' ? '.' : ch;
  return name;
}

std::string_view unsharedResourceName(std::string_view resource) {
  if (resource.size() > kSharedSuffix.size() &&
      resource.substr(resource.size() - kSharedSuffix.size()) == kSharedSuffix) {
    resource.remove_suffix(kSharedSuffix.size());
  }
  return resource;
}

const MigProfile* profileForResource(const GpuModel& model, std::string_view resource) {
  resource = unsharedResourceName(resource);
  for (const auto& p : model.profiles) {
    if (migResourceName(p.name) == resource) return &p;
  }
  return nullptr;
}

core::Result<std::map<std::string, std::int64_t>> exposedResources(
    const std::vector<MigGpuSetting>& gpus, MigStrategy strategy,
    const SharingConfig* timeSlicing) {
  auto physical = physicalResources(gpus, strategy);
  if (!physical || timeSlicing == nullptr) return physical;
  std::map<std::string, std::int64_t> out;
  for (const auto& [name, count] : *physical) {
    int replicas = timeSlicing->replicasFor(name);
    if (replicas > 1 && timeSlicing->renameByDefault) {
      out[name + std::string(kSharedSuffix)] = count * replicas;
    } else {
      out[name] = count * replicas;
    }
  }
  return out;
}

}  // namespace gpuscale::partition
