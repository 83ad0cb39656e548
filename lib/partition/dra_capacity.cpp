#include "gpuscale/partition/dra_capacity.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuscale/partition/resource_names.h"

namespace gpuscale::partition {
namespace {

const std::string kDriver(kNvidiaGpuDriver);

std::string stringAttribute(const DraDevice& d, std::string_view name) {
  const DraValue* v = d.attribute(kDriver, name);
  return v != nullptr && v->type == DraValue::Type::kString ? v->text : std::string();
}

using Counters = std::map<std::string, std::map<std::string, std::int64_t>>;

// What `d` takes from `free`, taken when it fits; false (nothing taken) when it does not.
bool take(const DraDevice& d, Counters& free) {
  for (const auto& use : d.consumesCounters) {
    auto set = free.find(use.counterSet);
    if (set == free.end()) return false;
    for (const auto& [counter, n] : use.counters) {
      auto it = set->second.find(counter);
      if (it == set->second.end() || it->second < n) return false;
    }
  }
  for (const auto& use : d.consumesCounters) {
    for (const auto& [counter, n] : use.counters) free[use.counterSet][counter] -= n;
  }
  return true;
}

Counters freeCounters(const DraPool& pool) {
  Counters free = pool.counterSets;
  for (const auto& d : pool.devices) {
    if (!pool.allocated.contains(d.name)) continue;
    for (const auto& use : d.consumesCounters) {
      for (const auto& [counter, n] : use.counters) {
        std::int64_t& left = free[use.counterSet][counter];
        // Many devices (the API bounds neither pools nor allocations across claims) saturate.
        if (__builtin_sub_overflow(left, n, &left)) left = std::numeric_limits<std::int64_t>::min();
      }
    }
  }
  return free;
}

}  // namespace

std::string_view capacityModelName(CapacityModel model) {
  switch (model) {
    case CapacityModel::kDraStatic:
      return "DRA static";
    case CapacityModel::kDraPartitionable:
      return "DRA partitionable";
    case CapacityModel::kDevicePlugin:
      break;
  }
  return "device plugin";
}

bool DraPool::partitionable() const {
  return std::any_of(devices.begin(), devices.end(),
                     [](const DraDevice& d) { return !d.consumesCounters.empty(); });
}

std::string DraPool::describe() const {
  std::string out = fmt::format("pool {} generation {}: {} devices, {} allocated", name, generation,
                                devices.size(), allocated.size());
  if (partitionable()) {
    std::vector<std::string> sets;
    for (const auto& [set, _] : counterSets) sets.push_back(set);
    out += fmt::format("; devices consume counters of {}", fmt::join(sets, ", "));
  }
  if (!complete()) out += fmt::format(" (incomplete: {} of {} slices)", slices, sliceCount);
  return out;
}

std::string draDeviceKind(const DraDevice& device) {
  const std::string type = stringAttribute(device, "type");
  if (type == "gpu") return std::string(kGpuResource);
  if (type == "mig") {
    const std::string profile = stringAttribute(device, "profile");
    if (!profile.empty()) return migResourceName(profile);
  }
  return {};
}

std::map<std::string, DraPool> draPools(const std::vector<ResourceSliceObject>& slices,
                                        const std::vector<ResourceClaimObject>& claims) {
  std::map<std::string, DraPool> pools;
  std::map<std::string, std::string> nodeOfPool;
  for (const auto& s : slices) {
    if (s.driver != kNvidiaGpuDriver || s.nodeName.empty()) continue;
    DraPool& pool = pools[s.nodeName];
    if (pool.name.empty()) pool.name = s.pool;
    if (s.pool != pool.name) continue;  // one pool per node, as the driver publishes
    nodeOfPool[s.pool] = s.nodeName;
    if (s.generation < pool.generation) continue;
    if (s.generation > pool.generation || pool.slices == 0) {
      pool.generation = s.generation;
      pool.slices = 0;
      pool.devices.clear();
      pool.counterSets.clear();
    }
    ++pool.slices;
    pool.sliceCount = s.sliceCount;
    pool.devices.insert(pool.devices.end(), s.devices.begin(), s.devices.end());
    for (const auto& c : s.sharedCounters) pool.counterSets[c.name] = c.counters;
  }
  for (const auto& claim : claims) {
    for (const auto& a : claim.allocated) {
      if (a.driver != kNvidiaGpuDriver) continue;
      auto node = nodeOfPool.find(a.pool);
      if (node != nodeOfPool.end()) pools[node->second].allocated.insert(a.device);
    }
  }
  return pools;
}

std::int64_t allocatableDevices(const DraPool& pool,
                                const std::function<bool(const DraDevice&)>& match) {
  if (!pool.complete()) return 0;
  Counters free = freeCounters(pool);
  std::int64_t n = 0;
  for (const auto& d : pool.devices) {
    if (pool.allocated.contains(d.name) || d.tainted || !match(d)) continue;
    if (take(d, free)) ++n;
  }
  return n;
}

ResourceCounts draUsed(const DraPool& pool) {
  ResourceCounts used;
  for (const auto& d : pool.devices) {
    if (!pool.allocated.contains(d.name)) continue;
    if (auto kind = draDeviceKind(d); !kind.empty()) ++used[kind];
  }
  return used;
}

ResourceCounts draCapacity(const DraPool& pool) {
  ResourceCounts out = draUsed(pool);
  std::set<std::string> kinds;
  for (const auto& d : pool.devices) {
    if (auto kind = draDeviceKind(d); !kind.empty()) kinds.insert(kind);
  }
  for (const auto& k : kinds) {
    out[k] += allocatableDevices(pool, [&](const DraDevice& d) { return draDeviceKind(d) == k; });
  }
  return out;
}

std::int64_t draReplicaRoom(const DraPool& pool, const ClaimDemand& demand) {
  if (demand.perPod <= 0 || !demand.problem.empty()) return 0;
  return allocatableDevices(pool, [&](const DraDevice& d) { return demand.matches(d); }) /
         demand.perPod;
}

bool ClaimDemand::matches(const DraDevice& device) const {
  for (const auto& request : matchers) {
    bool all = true;
    for (const auto& s : request) {
      auto m = s.matches(device, kNvidiaGpuDriver);
      if (!m || !*m) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

std::vector<DraDevice> draExemplars(const NodeState& node) {
  std::vector<DraDevice> out;
  if (node.draPool == nullptr || node.draPool->partitionable() || node.model == nullptr) return out;
  const DraPool& pool = *node.draPool;
  std::set<std::string> published;
  const DraDevice* base = nullptr;
  for (const auto& d : pool.devices) {
    published.insert(draDeviceKind(d));
    const std::string type = stringAttribute(d, "type");
    if (type == "mig" && (base == nullptr || stringAttribute(*base, "type") != "mig")) base = &d;
    if (type == "gpu" && base == nullptr) base = &d;
  }
  for (const auto& p : node.model->profiles) {
    if (published.contains(migResourceName(p.name))) continue;
    DraDevice d;
    if (base != nullptr) {
      d.attributes = base->attributes;
      if (stringAttribute(*base, "type") == "gpu") {
        if (const DraValue* uuid = base->attribute(kDriver, "uuid"))
          d.attributes[kDriver + "/parentUUID"] = *uuid;
      }
    } else if (!node.product.empty()) {
      // GPU Feature Discovery's product label is NVML's name with spaces as dashes; the driver
      // publishes NVML's ("NVIDIA A100-SXM4-40GB").
      std::string name = node.product;
      if (auto dash = name.find('-'); dash != std::string::npos) name[dash] = ' ';
      d.attributes[kDriver + "/productName"] = DraValue{DraValue::Type::kString, name, 0, false};
    }
    d.attributes.erase(kDriver + "/uuid");
    d.attributes[kDriver + "/type"] = DraValue{DraValue::Type::kString, "mig", 0, false};
    d.attributes[kDriver + "/profile"] = DraValue{DraValue::Type::kString, p.name, 0, false};
    d.capacity[kDriver + "/memory"] = fmt::format("{}Mi", std::int64_t{p.memoryGb} * 1024);
    d.name = "exemplar-" + p.name;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace gpuscale::partition
