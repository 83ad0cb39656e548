#include "plan_builder.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gpuscale/partition/gpu_memory_need.h"
#include "gpuscale/partition/gpu_tenancy.h"
#include "gpuscale/partition/lever_choice.h"
#include "gpuscale/partition/mps_sharing.h"
#include "gpuscale/partition/resource_names.h"

namespace gpuscale::partition::detail {
namespace {

constexpr double kBytesPerGb = 1e9;  // profile names count decimal gigabytes
constexpr double kBytesPerGiB = 1073741824.0;

}  // namespace

std::optional<double> PlanBuilder::partitionMemoryBytes(std::size_t i,
                                                        const std::string& base) const {
  const NodeState& n = snap_.nodes[i];
  if (n.model != nullptr) {
    if (const MigProfile* p = profileForResource(*n.model, base)) return p->memoryGb * kBytesPerGb;
    if (n.migStrategy == MigStrategy::kSingle && !nodes_[i].gpus.empty() &&
        nodes_[i].gpus.front().geometry.size() == 1) {
      const MigProfile* p = n.model->profile(nodes_[i].gpus.front().geometry.begin()->first);
      if (p != nullptr) return p->memoryGb * kBytesPerGb;
    }
  }
  if (base == kGpuResource && n.migStrategy != MigStrategy::kSingle && n.gpuMemoryGiB) {
    return *n.gpuMemoryGiB * kBytesPerGiB;
  }
  return std::nullopt;
}

bool PlanBuilder::waitsForMapping(const WorkloadDemand& d) {
  for (std::size_t i : d.eligibleNodes) {
    if (!waitsForGpuMapping(snap_.nodes[i], *d.policy)) continue;
    notes_.push_back(fmt::format(
        "{}/{}: waiting for the per-GPU mapping of {} to settle (pods that just started are not "
        "in the metrics yet) before choosing a lever",
        d.ns, d.name, snap_.nodes[i].name));
    because(d, {WhyCode::kWaitingForMapping, snap_.nodes[i].name, std::nullopt,
                "pods that just started are not in its per-GPU metrics yet; no lever is chosen "
                "until the mapping settles (bounded by --dcgm-settle)"});
    return true;
  }
  return false;
}

int PlanBuilder::applyLevers(const WorkloadDemand& d, int need, int before) {
  int gained = 0;
  int reshaped = 0;
  std::vector<SharingMode> sharing;  // the sharing levers, in the policy's order
  for (Lever lever : d.policy->levers) {
    if (gained >= need) break;
    if (lever == Lever::kMigReshape) {
      const int g = reshapeFor(d, need - gained);
      reshaped += g;
      gained += g;
    } else {
      sharing.push_back(lever == Lever::kMps ? SharingMode::kMps : SharingMode::kTimeSlicing);
      gained += shareFor(d, need - gained, sharing.back(), false);
    }
  }
  if (gained >= need || sharing.empty()) return gained;
  // Sharing saturated devices: the last resort.
  if (reshaped == 0 && d.runningPods >= before) {
    for (SharingMode mode : sharing) {
      if (gained >= need) break;
      gained += shareFor(d, need - gained, mode, true);
    }
    return gained;
  }
  const std::string base(unsharedResourceName(d.resource));
  for (std::size_t i : d.eligibleNodes) {
    if (!changeable(d, i) || !saturatedForTimeSlicing(snap_.nodes[i], base, *d.policy)) continue;
    notes_.push_back(fmt::format(
        "{}/{}: not time-slicing {}: its {} devices are saturated (utilisation {:.0f}%), and a "
        "reshape adds capacity first or the pods have not filled it yet",
        d.ns, d.name, snap_.nodes[i].name, base,
        100 * snap_.nodes[i].utilization.find(base)->second));
    because(d, i, sharing.front() == SharingMode::kMps ? Lever::kMps : Lever::kTimeSlicing,
            WhyCode::kSaturated,
            fmt::format("{} devices {:.0f}% utilised: shared only as the last resort, after a "
                        "reshape and once the pods fill what they have",
                        base, 100 * snap_.nodes[i].utilization.find(base)->second));
  }
  return gained;
}

SharingMode PlanBuilder::nodeSharing(std::size_t i) const {
  return nodes_[i].mode.value_or(snap_.nodes[i].sharingMode);
}

PlanBuilder::MemoryBound PlanBuilder::memoryBound(const WorkloadDemand& d, std::size_t i,
                                                  const std::string& base) const {
  const std::optional<double> deviceBytes = partitionMemoryBytes(i, base);
  MemoryBound bound;
  auto consider = [&](const GpuMemoryNeed& need) {
    const int r = replicasForMemory(need, deviceBytes);
    if (r < bound.replicas) bound = {r, describeMemoryBound(need, r), need.kind};
  };
  if (d.target != nullptr) consider(d.target->gpuMemory);
  // The pods already there share the devices too: each keeps what it took.
  for (const PodState* pod : activePodsOn(i)) {
    const bool onBase = std::any_of(
        pod->gpuRequests.begin(), pod->gpuRequests.end(),
        [&](const auto& r) { return r.second > 0 && unsharedResourceName(r.first) == base; });
    if (onBase) consider(pod->gpuMemory);
  }
  return bound;
}

PlanBuilder::SharingLimit PlanBuilder::sharingLimit(const WorkloadDemand& d, std::size_t i,
                                                    SharingMode mode) {
  const Policy& policy = *d.policy;
  const std::string base(unsharedResourceName(d.resource));
  const Lever lever = mode == SharingMode::kMps ? Lever::kMps : Lever::kTimeSlicing;
  if (snap_.nodes[i].dra()) {
    because(d, i, lever, WhyCode::kDraNoSharing,
            fmt::format("{} offers its GPUs through DRA ({}): a device is shared only among the "
                        "pods of one claim, by the claim's configuration",
                        snap_.nodes[i].name, capacityModelName(snap_.nodes[i].capacityModel)));
    return {};
  }
  int limit = 0;
  if (mode == SharingMode::kMps) {
    std::string blocker =
        mpsBlocker(snap_.nodes[i], d.resource, d.perPod, policy.mps.changeBusyNodes);
    if (blocker.empty() && nodes_[i].mode == SharingMode::kTimeSlicing)
      blocker = "this plan time-slices it";
    if (!blocker.empty()) {
      notes_.push_back(fmt::format("{}/{}: not using MPS on {}: {}", d.ns, d.name,
                                   snap_.nodes[i].name, blocker));
      because(d, i, Lever::kMps, WhyCode::kMps, "not shared by MPS: " + blocker);
      return {};
    }
    limit = mpsReplicaLimit(policy.mps.maxReplicas, gpuMemoryMiB(snap_.nodes[i]),
                            policy.mpsPerPodGpuMemoryBytes());
  } else {
    if (nodeSharing(i) == SharingMode::kMps) {
      because(d, i, Lever::kTimeSlicing, WhyCode::kMps, "the device plugin shares it by MPS");
      return {};
    }
    limit = policy.maxTimeSlicingReplicas;
    if (policy.perPodGpuMemoryBytes) {
      auto memory = partitionMemoryBytes(i, base);
      if (!memory) {
        because(d, i, Lever::kTimeSlicing, WhyCode::kMemoryUnknown,
                "perPodGpuMemory is set but the memory of " + base + " is unknown");
        return {};
      }
      double perPodBytes = *policy.perPodGpuMemoryBytes * static_cast<double>(d.perPod);
      limit = std::min(limit, static_cast<int>(std::floor(*memory / perPodBytes)));
    }
  }
  // What the pods take of each device (gpu_memory_need.h): sharing never leaves one less.
  MemoryBound memory = memoryBound(d, i, base);
  if (memory.replicas >= limit) return {limit, ""};
  if (memory.replicas < kMinSharedReplicas) {
    const bool unknown = memory.kind == GpuMemoryNeed::Kind::kUnknown ||
                         (memory.kind == GpuMemoryNeed::Kind::kBytes && memory.replicas == 0);
    notes_.push_back(fmt::format("{}/{}: not sharing {} of {}: {}", d.ns, d.name, base,
                                 snap_.nodes[i].name, memory.why));
    because(d, i, lever, unknown ? WhyCode::kMemoryUnknown : WhyCode::kMemoryLimit,
            "not shared: " + memory.why);
    return {};
  }
  return {memory.replicas, std::move(memory.why)};
}

int PlanBuilder::shareFor(const WorkloadDemand& d, int need, SharingMode mode, bool saturated) {
  const Policy& policy = *d.policy;
  const Lever lever = mode == SharingMode::kMps ? Lever::kMps : Lever::kTimeSlicing;
  const ResourceKey k = keyOf(d.resource);
  const std::string& base = k.base;
  int gained = 0;
  for (std::size_t i : d.eligibleNodes) {
    if (gained >= need) break;
    const NodeState& n = snap_.nodes[i];
    if (!changeable(d, i)) {
      because(d, unchangeable(d, i, lever));
      continue;
    }
    if (saturatedForTimeSlicing(n, base, policy) != saturated) continue;
    if (const std::string other = otherGpuTenant(n, base, d.ns, policy); !other.empty()) {
      notes_.push_back(fmt::format(
          "{}/{}: not sharing {} on {}: pods of namespace {} hold it there, and policy {} does "
          "not let {} share GPUs with {} (sharing.acrossNamespaces)",
          d.ns, d.name, base, n.name, other, policy.name, d.ns, other));
      because(d, i, lever, WhyCode::kOtherTenant,
              fmt::format("pods of namespace {} hold {} here; policy {} shares GPUs only within "
                          "a namespace unless sharing.acrossNamespaces lists both",
                          other, base, policy.name));
      continue;
    }
    const std::int64_t devices = deviceCount(i, k);
    if (devices <= 0) {
      because(d, i, lever, WhyCode::kNoDevices, "no device of " + base);
      continue;
    }
    const SharingLimit shareLimit = sharingLimit(d, i, mode);
    const int limit = shareLimit.replicas;
    if (limit <= 0) continue;
    const int r = replicas(i, k);
    const std::int64_t used = usedOn(i, k);
    const int before = podsOn(d, i, k);
    int chosen = r;
    int gain = 0;
    for (int r2 = r + 1; r2 <= limit; ++r2) {
      chosen = r2;
      gain = (pinsHold(d, i, base, r2) ? podsFitting(d, i, devices * r2, used) : 0) - before;
      if (gain >= need - gained) break;
    }
    if (gain <= 0) {
      if (r < limit && pinsHold(d, i, base, r) && !pinsHold(d, i, base, r + 1)) {
        notes_.push_back(renameNote(d, i));
        because(d, i, lever, WhyCode::kProductRename, notes_.back());
      } else if (r >= limit && !shareLimit.memoryBound.empty()) {
        because(d, i, lever, WhyCode::kMemoryLimit,
                fmt::format("{} replicas of {}; the limit is {}: {}", r, base, limit,
                            shareLimit.memoryBound));
      } else if (mode == SharingMode::kMps) {
        because(d, i, lever, r >= limit ? WhyCode::kReplicaLimit : WhyCode::kNoTimeSlicingGain,
                fmt::format("{} MPS replicas of {}; the limit is {} (mps.maxReplicas, at most "
                            "48, and GPU memory / the pod's memory)",
                            r, base, limit));
      } else {
        because(d, noTimeSlicingGain(n.name, base, r, limit, policy));
      }
      continue;
    }
    because(d, i, lever, WhyCode::kTimeSliced,
            fmt::format("{} -> {} {}replicas of {}, +{} pods", r, chosen,
                        mode == SharingMode::kMps ? "MPS " : "", base, gain));
    if (chosen >= limit && gain < need - gained && !shareLimit.memoryBound.empty()) {
      because(
          d, i, lever, WhyCode::kMemoryLimit,
          fmt::format("no more than {} replicas of {}: {}", limit, base, shareLimit.memoryBound));
    }
    nodes_[i].replicas[base] = chosen;
    nodes_[i].raised.insert(base);
    nodes_[i].mode = mode;
    gained += gain;
  }
  return gained;
}

std::string PlanBuilder::renameNote(const WorkloadDemand& d, std::size_t i) const {
  const ProductPin* pin = d.productPins.empty() ? nullptr : &d.productPins.front();
  const std::string key = pin != nullptr ? pin->key : "";
  const std::string pinned = pin != nullptr ? formatGpuProduct(pin->product) : "";
  GpuProduct renamed = pin != nullptr ? pin->product : GpuProduct{};
  renamed.shared = true;
  return fmt::format(
      "{}/{}: not time-slicing {}: GPU Feature Discovery would rename {} to {} and the pods' "
      "nodeSelector {}={} would no longer match (select by another label, or by nodeAffinity "
      "with both spellings)",
      d.ns, d.name, snap_.nodes[i].name, key, formatGpuProduct(renamed), key, pinned);
}

}  // namespace gpuscale::partition::detail
