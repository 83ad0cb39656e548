#include "gpuscale/partition/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/contention.h"
#include "gpuscale/partition/lever_choice.h"
#include "gpuscale/partition/mps_sharing.h"
#include "gpuscale/partition/resource_names.h"
#include "why_log.h"

namespace gpuscale::partition {
namespace {

constexpr double kBytesPerGb = 1e9;  // profile names count decimal gigabytes
constexpr double kBytesPerGiB = 1073741824.0;

struct WorkingNode {
  std::vector<MigGpuSetting> gpus;
  std::vector<bool> reshaped;
  std::map<std::string, int> replicas;  // changed sharing replicas per base resource
  std::set<std::string> raised;         // resources whose replicas this plan raised
  std::optional<SharingMode> mode;      // how this plan shares the node, when it changes that
  ResourceCounts devices;
};

ProfileFilter filterFor(const Policy& policy) {
  ProfileFilter f;
  f.profiles = policy.migProfiles;
  f.baseOnly = policy.migProfiles.empty();
  return f;
}

int removedInstances(const MigGeometry& from, const MigGeometry& to) {
  int removed = 0;
  for (const auto& [profile, count] : from) {
    auto it = to.find(profile);
    removed += std::max(0, count - (it == to.end() ? 0 : it->second));
  }
  return removed;
}

// Profiles in `to` that `from` does not have, other than `wanted`: new resource types for the
// cluster.
int introducedProfiles(const MigGeometry& from, const MigGeometry& to, const std::string& wanted) {
  int introduced = 0;
  for (const auto& [profile, count] : to) {
    if (profile != wanted && from.count(profile) == 0) ++introduced;
  }
  return introduced;
}

int countOf(const MigGeometry& g, const std::string& profile) {
  auto it = g.find(profile);
  return it == g.end() ? 0 : it->second;
}

struct Growth {
  int before = 0, aim = 0, after = 0;  // partition ceiling before, aimed at, after
};

class PlanBuilder {
 public:
  PlanBuilder(const ClusterSnapshot& snapshot, TimePoint now) : snap_(snapshot), now_(now) {
    nodes_.reserve(snap_.nodes.size());
    for (const auto& n : snap_.nodes) {
      WorkingNode w;
      for (const auto& g : n.gpus) w.gpus.push_back(g.setting);
      w.reshaped.assign(w.gpus.size(), false);
      w.devices = n.devices;
      nodes_.push_back(std::move(w));
    }
  }

  // Grows `d` towards its aim. Returns the partition ceiling before and after, and the aim;
  // nullopt when the cooldown holds it.
  std::optional<Growth> grow(const WorkloadDemand& d) {
    const Policy& policy = *d.policy;
    if (const auto& last = d.hpa->lastChange; last && now_ - *last < policy.scaleUpCooldown) {
      notes_.push_back(
          fmt::format("{}/{}: within the scale-up cooldown, not changed", d.ns, d.name));
      why_.cooldown(d, now_);
      return std::nullopt;
    }
    // No pod fits anywhere yet (pinned to a product spelling no node has before the raise): the
    // HPA's own ceiling stands in for the partition count a factor multiplies.
    const int hardMax = policy.hardMaxFor(
        d.ceiling > 0 ? d.ceiling : d.hpa->originalMaxReplicas.value_or(d.hpa->maxReplicas));
    const int before = ceiling(d);
    const int aim = std::min(d.wanted, hardMax);
    int need = aim - before;
    why_.aiming(d, hardMax, aim);
    if (need > 0 && waitsForMapping(d)) return std::nullopt;
    need -= applyLevers(d, need, before);
    const int after = ceiling(d);
    const int newMax = std::min(hardMax, after);
    if (newMax > d.hpa->maxReplicas) setMax(d, newMax);
    if (need > 0) {
      notes_.push_back(
          fmt::format("{}/{}: aims at {} pods of {}, partitions hold {} after this plan", d.ns,
                      d.name, aim, d.resource, after));
    }
    why_.grown(d, after, need);
    return Growth{before, aim, after};
  }

  // Blocked workloads that can use the same nodes, in priority order. Each grows as it would
  // alone (the levers change node-wide capacity, which every one of them then sees as free). When
  // the pods they still need exceed what is free after those changes, the contention rule
  // (contention.h) shares the free pods and each HPA's maxReplicas is raised only to what it holds
  // plus its share: maxReplicas is what keeps one HPA from taking another's share.
  void growGroup(const std::vector<const WorkloadDemand*>& group) {
    std::vector<std::optional<Growth>> grown;
    for (const WorkloadDemand* d : group) grown.push_back(grow(*d));
    if (group.size() < 2) return;
    const WorkloadDemand& lead = *group.front();
    std::set<std::size_t> nodes;
    for (const WorkloadDemand* d : group) {
      // Shares count pods of one size (contention.h): different resources are not shared.
      if (d->resource != lead.resource || d->perPod != lead.perPod) return;
      nodes.insert(d->eligibleNodes.begin(), d->eligibleNodes.end());
    }
    const std::string base(unsharedResourceName(lead.resource));
    std::int64_t freeUnits = 0;
    for (std::size_t i : nodes) {
      freeUnits += std::max<std::int64_t>(
          0, deviceCount(i, base) * replicas(i, base) - usedOn(i, lead.resource));
    }
    const int freePods = static_cast<int>(freeUnits / std::max<std::int64_t>(1, lead.perPod));
    std::vector<CapacityClaim> claims;
    std::vector<int> held;
    int needed = 0;
    for (std::size_t k = 0; k < group.size(); ++k) {
      const WorkloadDemand& d = *group[k];
      std::int64_t own = 0;
      for (const auto& [i, units] : d.ownUsage) own += units;
      held.push_back(static_cast<int>(own / d.perPod));
      const int need = grown[k] ? std::max(0, grown[k]->aim - held.back()) : 0;
      claims.push_back({d.ns + "/" + d.name, d.priority.value, need});
      needed += need;
    }
    if (needed <= freePods) return;
    const std::vector<CapacityGrant> grants = shareCapacity(claims, freePods);
    for (std::size_t k = 0; k < group.size(); ++k) {
      if (!grown[k]) continue;
      const WorkloadDemand& d = *group[k];
      const int newMax = std::min(grown[k]->after, held[k] + grants[k].granted);
      if (newMax > d.hpa->maxReplicas) {
        setMax(d, newMax);
      } else {
        maxChanges_.erase({d.ns, d.name});
      }
      // The grant's sentence, and where the HPA's priority came from.
      shares_[{d.ns, d.name}] = grants[k].why + " (priority from " + d.priority.source + ")";
    }
  }

  void shrink(const WorkloadDemand& d) {
    const Policy& policy = *d.policy;
    if (!d.hpa->originalMaxReplicas) return;
    const int originalMax = *d.hpa->originalMaxReplicas;
    // Hysteresis comes from the HPA's own scale-down stabilization (spec.replicas falls only after
    // it) and from this cooldown on gpuscale's last change, not from the HPA's lastScaleTime: an
    // HPA that keeps adjusting a few replicas at the base load would otherwise never get isolation
    // back.
    const auto& lastChange = d.hpa->lastChange;
    if (lastChange && now_ - *lastChange < policy.scaleDownCooldown) return;
    const int floorPods =
        std::max({d.wanted, d.target->specReplicas, d.hpa->minReplicas, d.runningPods});
    const std::string base(unsharedResourceName(d.resource));
    int current = ceiling(d);
    for (auto it = d.eligibleNodes.rbegin(); it != d.eligibleNodes.rend() && current > floorPods;
         ++it) {
      const std::size_t i = *it;
      if (!changeable(d, i) || !snap_.nodes[i].ownsDevicePluginConfig() ||
          nodes_[i].raised.count(base)) {
        continue;
      }
      const int r = replicas(i, base);
      const std::int64_t devices = deviceCount(i, base);
      if (r <= 1 || devices <= 0) continue;
      const std::int64_t used = usedOn(i, d.resource);
      const int minReplicas = std::max<int>(1, static_cast<int>((used + devices - 1) / devices));
      const int before = podsOn(d, i);
      for (int r2 = minReplicas; r2 < r; ++r2) {
        if (!pinsHold(d, i, base, r2)) continue;  // lowering would rename the product away
        int after = podsFitting(d, i, devices * r2, used);
        if (current - (before - after) >= floorPods) {
          nodes_[i].replicas[base] = r2;
          current -= before - after;
          break;
        }
      }
    }
    if (policy.migRestore) restoreMig(d, floorPods);
    const int lowered = std::max({originalMax, d.target->specReplicas, d.hpa->minReplicas,
                                  std::min(d.hpa->maxReplicas, ceiling(d))});
    if (lowered < d.hpa->maxReplicas) setMax(d, lowered);
  }

  // Nodes a blocked workload may land on: no burst reshape is given back there.
  void markBurstNodes(const std::vector<WorkloadDemand>& workloads) {
    for (const auto& d : workloads) {
      if (d.blocked) burstNodes_.insert(d.eligibleNodes.begin(), d.eligibleNodes.end());
    }
  }

  Plan finish(const std::vector<WorkloadDemand>& workloads) {
    Plan plan;
    for (const auto& d : workloads) {
      if (d.blocked) {
        std::string explain;
        if (d.reason == "Anticipated" && d.forecast) explain = "predicted: " + d.forecast->why;
        if (auto it = shares_.find({d.ns, d.name}); it != shares_.end()) {
          explain += (explain.empty() ? "" : "; ") + ("shared: " + it->second);
        }
        plan.demands.push_back(
            {d.ns, d.name, d.resource, d.reason, d.ceiling, d.wanted, std::move(explain)});
      }
      plan.capacityAfter.push_back({d.ns, d.name, ceiling(d)});
      const auto change = maxChanges_.find({d.ns, d.name});
      const auto share = shares_.find({d.ns, d.name});
      plan.why.push_back(why_.finish(d, change == maxChanges_.end() ? nullptr : &change->second,
                                     share == shares_.end() ? "" : share->second));
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (auto a = migAction(i)) plan.actions.emplace_back(std::move(*a));
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      for (const auto& [resource, r] : nodes_[i].replicas) {
        int from = snap_.nodes[i].replicasFor(resource);
        if (r != from) {
          plan.actions.emplace_back(
              TimeSlicingChange{snap_.nodes[i].name, resource, from, r, nodeSharing(i)});
        }
      }
    }
    for (const auto& [key, change] : maxChanges_) plan.actions.emplace_back(change);
    plan.notes = std::move(notes_);
    return plan;
  }

 private:
  int replicas(std::size_t i, const std::string& base) const {
    auto it = nodes_[i].replicas.find(base);
    return it != nodes_[i].replicas.end() ? it->second : snap_.nodes[i].replicasFor(base);
  }

  std::int64_t deviceCount(std::size_t i, const std::string& base) const {
    auto it = nodes_[i].devices.find(base);
    return it == nodes_[i].devices.end() ? 0 : it->second;
  }

  std::int64_t usedOn(std::size_t i, const std::string& resource) const {
    auto it = snap_.nodes[i].used.find(resource);
    return it == snap_.nodes[i].used.end() ? 0 : it->second;
  }

  int podsOn(const WorkloadDemand& d, std::size_t i) const {
    const std::string base(unsharedResourceName(d.resource));
    if (!pinsHold(d, i, base, replicas(i, base))) return 0;
    return podsFitting(d, i, deviceCount(i, base) * replicas(i, base), usedOn(i, d.resource));
  }

  // Whether node i's product labels match the pods' nodeSelector (exactly, as the scheduler
  // matches) once `base` runs `r` replicas and the node has its working geometry: GFD renames
  // the product with the sharing and, under the single strategy, with the MIG profile.
  bool pinsHold(const WorkloadDemand& d, std::size_t i, const std::string& base, int r) const {
    const NodeState& n = snap_.nodes[i];
    for (const ProductPin& pin : d.productPins) {
      auto label = n.labels.find(pin.key);
      if (label == n.labels.end()) return false;
      GpuProduct have = parseGpuProduct(label->second);
      const auto& gpus = nodes_[i].gpus;
      if (pin.resource == kGpuResource && n.migStrategy == MigStrategy::kSingle && !gpus.empty() &&
          gpus.front().geometry.size() == 1) {
        have.migProfile = gpus.front().geometry.begin()->first;
      }
      if (!pinHolds(pin, formatGpuProduct(have),
                    pin.resource == base ? r : replicas(i, pin.resource)))
        return false;
    }
    return true;
  }

  int ceiling(const WorkloadDemand& d) const {
    int total = 0;
    for (std::size_t i : d.eligibleNodes) total += podsOn(d, i);
    return total;
  }

  bool changeable(const WorkloadDemand& d, std::size_t i) const {
    const NodeState& n = snap_.nodes[i];
    return !n.inTransition && d.policy->selectsNode(n.labels);
  }

  bool reshapeable(const WorkloadDemand& d, std::size_t i) const {
    const NodeState& n = snap_.nodes[i];
    // With GPU pods on the node only mixed-strategy GPUs known idle may change (reshapeMixed
    // checks each GPU's `busy`); the single strategy rebuilds every GPU of the node.
    return changeable(d, i) && n.model != nullptr && n.geometryKnown &&
           n.migStrategy != MigStrategy::kNone &&
           (!n.hasGpuPods || n.migStrategy == MigStrategy::kMixed);
  }

  const std::vector<MigGeometry>& maximal(const GpuModel& model, const Policy& policy) {
    auto key = std::make_pair(&model, &policy);
    auto it = maximalCache_.find(key);
    if (it == maximalCache_.end()) {
      it = maximalCache_.emplace(key, maximalGeometries(model, filterFor(policy))).first;
    }
    return it->second;
  }

  void setGeometry(std::size_t i, std::size_t gpu, MigGeometry g) {
    WorkingNode& w = nodes_[i];
    w.gpus[gpu] = MigGpuSetting{true, std::move(g)};
    w.reshaped[gpu] = true;
    auto exposed = exposedResources(w.gpus, snap_.nodes[i].migStrategy, nullptr);
    if (exposed) w.devices = ResourceCounts(exposed->begin(), exposed->end());
  }

  int reshapeFor(const WorkloadDemand& d, int need) {
    int gained = 0;
    for (std::size_t i : d.eligibleNodes) {
      if (gained >= need) break;
      if (!reshapeable(d, i)) {
        because(d, changeable(d, i) ? nodeNotReshapeable(snap_.nodes[i])
                                    : unchangeable(d, i, Lever::kMigReshape));
        continue;
      }
      const int g = snap_.nodes[i].migStrategy == MigStrategy::kSingle
                        ? reshapeSingle(d, i)
                        : reshapeMixed(d, i, need - gained);
      if (g > 0) because(d, i, Lever::kMigReshape, WhyCode::kReshaped, fmt::format("+{} pods", g));
      gained += g;
    }
    return gained;
  }

  int reshapeMixed(const WorkloadDemand& d, std::size_t i, int need) {
    const NodeState& n = snap_.nodes[i];
    const std::string base(unsharedResourceName(d.resource));
    const MigProfile* profile = profileForResource(*n.model, base);
    if (profile == nullptr || !filterFor(*d.policy).allows(*profile)) {
      because(d, i, Lever::kMigReshape, WhyCode::kProfileNotAllowed,
              fmt::format("{} is not a MIG profile of {} the policy lets a reshape create", base,
                          n.model->name));
      return 0;
    }
    const auto& candidates = maximal(*n.model, *d.policy);
    const int r = replicas(i, base);
    const std::int64_t used = usedOn(i, d.resource);
    int gained = 0;
    int migGpus = 0, busy = 0;
    for (std::size_t gpu = 0; gpu < nodes_[i].gpus.size() && gained < need; ++gpu) {
      const MigGpuSetting& cur = nodes_[i].gpus[gpu];
      migGpus += cur.migEnabled ? 1 : 0;
      busy += cur.migEnabled && n.gpus[gpu].busy ? 1 : 0;
      // MIG mode never changes here: that needs a GPU reset, which other GPUs' pods may not
      // survive.
      if (nodes_[i].reshaped[gpu] || !cur.migEnabled || n.gpus[gpu].busy) continue;
      const int before = podsOn(d, i);
      const int have = countOf(cur.geometry, profile->name);
      const MigGeometry* best = nullptr;
      // Candidates are sorted by formatGeometry(), so their index is the deterministic last
      // tie-break.
      std::tuple<int, int, int, int, std::size_t> bestKey;
      int bestGain = 0;
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        const MigGeometry& g = candidates[c];
        int extra = countOf(g, profile->name) - have;
        if (extra <= 0) continue;
        int gain = podsFitting(d, i, (deviceCount(i, base) + extra) * r, used) - before;
        if (gain <= 0) continue;
        bool enough = gain >= need - gained;
        int removed = removedInstances(cur.geometry, g);
        int introduced = introducedProfiles(cur.geometry, g, profile->name);
        auto key = enough ? std::make_tuple(0, removed, introduced, gain, c)
                          : std::make_tuple(1, -gain, removed, introduced, c);
        if (best == nullptr || key < bestKey) {
          best = &g;
          bestKey = key;
          bestGain = gain;
        }
      }
      if (best == nullptr) continue;
      setGeometry(i, gpu, *best);
      gained += bestGain;
    }
    if (gained == 0) because(d, noReshapeGain(n, migGpus, busy));
    return gained;
  }

  // Single strategy: every GPU must hold the same one-profile geometry, so the node changes as a
  // whole.
  int reshapeSingle(const WorkloadDemand& d, std::size_t i) {
    const NodeState& n = snap_.nodes[i];
    if (unsharedResourceName(d.resource) != kGpuResource) return 0;
    WorkingNode& w = nodes_[i];
    if (std::any_of(w.reshaped.begin(), w.reshaped.end(), [](bool b) { return b; })) return 0;
    const ProfileFilter filter = filterFor(*d.policy);
    const MigProfile* best = nullptr;
    for (const auto& p : n.model->profiles) {
      if (!filter.allows(p) || !isValidGeometry(*n.model, {{p.name, p.maxCount}})) continue;
      if (best == nullptr || p.maxCount > best->maxCount) best = &p;
    }
    if (best == nullptr) {
      because(d, i, Lever::kMigReshape, WhyCode::kProfileNotAllowed,
              "no profile the policy allows fills a GPU uniformly");
      return 0;
    }
    const int before = podsOn(d, i);
    std::vector<MigGpuSetting> saved = w.gpus;
    ResourceCounts savedDevices = w.devices;
    for (std::size_t gpu = 0; gpu < w.gpus.size(); ++gpu)
      setGeometry(i, gpu, {{best->name, best->maxCount}});
    const int gain = podsOn(d, i) - before;
    if (gain > 0) return gain;
    w.gpus = std::move(saved);
    w.devices = std::move(savedDevices);
    w.reshaped.assign(w.gpus.size(), false);
    because(d, i, Lever::kMigReshape, WhyCode::kNoReshapeGain,
            fmt::format("all GPUs as {} add no pod", best->name));
    return 0;
  }

  // Gives back a burst's reshape (policy migGiveBack: restore): node i's GPUs return to the config
  // before gpuscale reshaped them, when the node holds no GPU pod, no blocked workload may land
  // there, MIG mode stays as it is, and the pods the workload needs still fit without it.
  void restoreMig(const WorkloadDemand& d, int floorPods) {
    for (auto it = d.eligibleNodes.rbegin(); it != d.eligibleNodes.rend(); ++it) {
      const std::size_t i = *it;
      const NodeState& n = snap_.nodes[i];
      WorkingNode& w = nodes_[i];
      if (!n.restoreGpus || n.hasGpuPods || burstNodes_.contains(i) || !changeable(d, i) ||
          n.restoreGpus->size() != w.gpus.size() ||
          std::any_of(w.reshaped.begin(), w.reshaped.end(), [](bool b) { return b; })) {
        continue;
      }
      bool changes = false;
      bool sameMode = true;
      for (std::size_t gpu = 0; gpu < w.gpus.size(); ++gpu) {
        const MigGpuSetting& to = (*n.restoreGpus)[gpu];
        sameMode = sameMode && to.migEnabled == w.gpus[gpu].migEnabled;
        changes = changes || to.geometry != w.gpus[gpu].geometry;
      }
      if (!changes || !sameMode) continue;
      const WorkingNode saved = w;
      for (std::size_t gpu = 0; gpu < w.gpus.size(); ++gpu) {
        if ((*n.restoreGpus)[gpu].geometry != w.gpus[gpu].geometry)
          setGeometry(i, gpu, (*n.restoreGpus)[gpu].geometry);
      }
      if (ceiling(d) < floorPods) {
        w = saved;
        continue;
      }
      notes_.push_back(fmt::format("{}/{}: giving back {}'s MIG geometry (idle since the burst)",
                                   d.ns, d.name, n.name));
    }
  }

  // Memory behind one unit of `base` on node i, when known.
  std::optional<double> partitionMemoryBytes(std::size_t i, const std::string& base) const {
    const NodeState& n = snap_.nodes[i];
    if (n.model != nullptr) {
      if (const MigProfile* p = profileForResource(*n.model, base))
        return p->memoryGb * kBytesPerGb;
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

  // Whether `d` waits for a node's per-GPU mapping to settle before choosing a lever
  // (lever_choice.h); notes why.
  bool waitsForMapping(const WorkloadDemand& d) {
    for (std::size_t i : d.eligibleNodes) {
      if (!waitsForGpuMapping(snap_.nodes[i], *d.policy)) continue;
      notes_.push_back(fmt::format(
          "{}/{}: waiting for the per-GPU mapping of {} to settle (pods that just started are not "
          "in the metrics yet) before choosing a lever",
          d.ns, d.name, snap_.nodes[i].name));
      return true;
    }
    return false;
  }

  // The policy's levers in order, towards `need` more pods; returns the pods gained. Devices that
  // are saturated (lever_choice.h) are time-sliced last, and only when no reshape gained anything
  // and the workload's pods fill the `before` partitions it has (else they are still landing on
  // the capacity the last change added).
  int applyLevers(const WorkloadDemand& d, int need, int before) {
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
    }
    return gained;
  }

  // How node i shares once this plan applies.
  SharingMode nodeSharing(std::size_t i) const {
    return nodes_[i].mode.value_or(snap_.nodes[i].sharingMode);
  }

  // Replicas per device `mode` allows on node i for `d`; 0 when the node cannot share that way
  // (recorded as the reason why).
  int sharingLimit(const WorkloadDemand& d, std::size_t i, SharingMode mode) {
    const Policy& policy = *d.policy;
    const std::string base(unsharedResourceName(d.resource));
    if (mode == SharingMode::kMps) {
      std::string blocker =
          mpsBlocker(snap_.nodes[i], d.resource, d.perPod, policy.mps.changeBusyNodes);
      if (blocker.empty() && nodes_[i].mode == SharingMode::kTimeSlicing)
        blocker = "this plan time-slices it";
      if (!blocker.empty()) {
        notes_.push_back(fmt::format("{}/{}: not using MPS on {}: {}", d.ns, d.name,
                                     snap_.nodes[i].name, blocker));
        because(d, i, Lever::kMps, WhyCode::kMps, "not shared by MPS: " + blocker);
        return 0;
      }
      return mpsReplicaLimit(policy.mps.maxReplicas, gpuMemoryMiB(snap_.nodes[i]),
                             policy.mpsPerPodGpuMemoryBytes());
    }
    if (nodeSharing(i) == SharingMode::kMps) {
      because(d, i, Lever::kTimeSlicing, WhyCode::kMps, "the device plugin shares it by MPS");
      return 0;
    }
    int limit = policy.maxTimeSlicingReplicas;
    if (policy.perPodGpuMemoryBytes) {
      auto memory = partitionMemoryBytes(i, base);
      if (!memory) {
        because(d, i, Lever::kTimeSlicing, WhyCode::kMemoryUnknown,
                "perPodGpuMemory is set but the memory of " + base + " is unknown");
        return 0;
      }
      double perPodBytes = *policy.perPodGpuMemoryBytes * static_cast<double>(d.perPod);
      limit = std::min(limit, static_cast<int>(std::floor(*memory / perPodBytes)));
    }
    return limit;
  }

  // Raises node-wide replicas of the workload's resource, time-slicing or MPS, on the eligible
  // nodes whose devices are saturated (`saturated`, lever_choice.h) or not.
  int shareFor(const WorkloadDemand& d, int need, SharingMode mode, bool saturated) {
    const Policy& policy = *d.policy;
    const Lever lever = mode == SharingMode::kMps ? Lever::kMps : Lever::kTimeSlicing;
    const std::string base(unsharedResourceName(d.resource));
    int gained = 0;
    for (std::size_t i : d.eligibleNodes) {
      if (gained >= need) break;
      const NodeState& n = snap_.nodes[i];
      if (!changeable(d, i)) {
        because(d, unchangeable(d, i, lever));
        continue;
      }
      if (saturatedForTimeSlicing(n, base, policy) != saturated) continue;
      const std::int64_t devices = deviceCount(i, base);
      if (devices <= 0) {
        because(d, i, lever, WhyCode::kNoDevices, "no device of " + base);
        continue;
      }
      const int limit = sharingLimit(d, i, mode);
      if (limit <= 0) continue;
      const int r = replicas(i, base);
      const std::int64_t used = usedOn(i, d.resource);
      const int before = podsOn(d, i);
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
      nodes_[i].replicas[base] = chosen;
      nodes_[i].raised.insert(base);
      nodes_[i].mode = mode;
      gained += gain;
    }
    return gained;
  }

  // Why a node that could be time-sliced is not: the pods pin the unshared product spelling.
  std::string renameNote(const WorkloadDemand& d, std::size_t i) const {
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

  void because(const WorkloadDemand& d, std::size_t i, Lever lever, WhyCode code,
               std::string detail) {
    why_.add(d, {code, snap_.nodes[i].name, lever, std::move(detail)});
  }
  void because(const WorkloadDemand& d, WhyReason r) { why_.add(d, std::move(r)); }
  // Why changeable(d, i) is false, for `lever`.
  WhyReason unchangeable(const WorkloadDemand& d, std::size_t i, Lever lever) const {
    WhyReason r = nodeUnchangeable(snap_.nodes[i], *d.policy, now_).value_or(WhyReason{});
    r.lever = lever;
    return r;
  }

  void setMax(const WorkloadDemand& d, int to) {
    maxChanges_[{d.ns, d.name}] = SetMaxReplicas{d.ns, d.name, d.hpa->maxReplicas, to};
  }

  std::optional<MigReconfigure> migAction(std::size_t i) const {
    const WorkingNode& w = nodes_[i];
    const NodeState& n = snap_.nodes[i];
    MigReconfigure a;
    a.node = n.name;
    for (std::size_t gpu = 0; gpu < w.gpus.size(); ++gpu) {
      const MigGeometry& from = n.gpus[gpu].setting.geometry;
      if (w.reshaped[gpu] && w.gpus[gpu].geometry != from) {
        a.gpus.push_back({static_cast<int>(gpu), from, w.gpus[gpu].geometry});
      }
    }
    if (a.gpus.empty()) return std::nullopt;
    a.entries = perGpuEntries(w.gpus);
    std::string canonical;
    for (const auto& e : a.entries) {
      canonical += fmt::format("{}|{}|{};", fmt::join(e.devices, ","), e.migEnabled,
                               formatGeometry(e.migDevices));
    }
    a.configName = ownedConfigName(n.name, canonical);
    return a;
  }

  const ClusterSnapshot& snap_;
  TimePoint now_;
  std::vector<WorkingNode> nodes_;
  std::map<std::pair<std::string, std::string>, SetMaxReplicas> maxChanges_;
  std::map<std::pair<const GpuModel*, const Policy*>, std::vector<MigGeometry>> maximalCache_;
  std::vector<std::string> notes_;
  std::set<std::size_t> burstNodes_;
  std::map<std::pair<std::string, std::string>, std::string> shares_;  // contended HPAs: why
  WhyLog why_;
};

}  // namespace

Plan planPartitions(const ClusterSnapshot& snapshot, const std::vector<WorkloadDemand>& workloads,
                    TimePoint now) {
  PlanBuilder builder(snapshot, now);
  for (const auto& group : contentionGroups(workloads)) builder.growGroup(group);
  builder.markBurstNodes(workloads);
  for (const auto& d : workloads) {
    if (!d.blocked) builder.shrink(d);
  }
  return builder.finish(workloads);
}

}  // namespace gpuscale::partition
