#include "plan_builder.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/partition/resource_names.h"

namespace gpuscale::partition::detail {
namespace {

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

}  // namespace

bool PlanBuilder::reshapeable(const WorkloadDemand& d, std::size_t i) const {
  const NodeState& n = snap_.nodes[i];
  // With GPU pods on the node only mixed-strategy GPUs known idle may change (reshapeMixed
  // checks each GPU's `busy`); the single strategy rebuilds every GPU of the node.
  return changeable(d, i) && n.model != nullptr && n.migManaged() && n.geometryKnown &&
         n.capacityModel != CapacityModel::kDraPartitionable &&
         n.migStrategy != MigStrategy::kNone &&
         (!n.hasGpuPods || n.migStrategy == MigStrategy::kMixed);
}

const std::vector<MigGeometry>& PlanBuilder::maximal(const GpuModel& model, const Policy& policy) {
  auto key = std::make_pair(&model, &policy);
  auto it = maximalCache_.find(key);
  if (it == maximalCache_.end()) {
    it = maximalCache_.emplace(key, maximalGeometries(model, filterFor(policy))).first;
  }
  return it->second;
}

void PlanBuilder::setGeometry(std::size_t i, std::size_t gpu, MigGeometry g) {
  setSetting(i, gpu, MigGpuSetting{true, std::move(g)});
}

void PlanBuilder::setSetting(std::size_t i, std::size_t gpu, MigGpuSetting s) {
  WorkingNode& w = nodes_[i];
  w.gpus[gpu] = std::move(s);
  w.reshaped[gpu] = true;
  auto exposed = exposedResources(w.gpus, snap_.nodes[i].migStrategy, nullptr);
  if (exposed) w.devices = ResourceCounts(exposed->begin(), exposed->end());
}

int PlanBuilder::reshapeFor(const WorkloadDemand& d, int need) {
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
                      : reshapeMixed(d, i, need - gained, false);
    if (g > 0) because(d, i, Lever::kMigReshape, WhyCode::kReshaped, fmt::format("+{} pods", g));
    gained += g;
  }
  // Mode changes only once no geometry change of a MIG-enabled GPU is enough: they take longer
  // and reset every GPU of their node.
  if (!d.policy->migModeChange.enabled) return gained;
  for (std::size_t i : d.eligibleNodes) {
    if (gained >= need) break;
    const NodeState& n = snap_.nodes[i];
    if (!reshapeable(d, i) || n.migStrategy != MigStrategy::kMixed || n.hasGpuPods) continue;
    const int g = reshapeMixed(d, i, need - gained, true);
    if (g > 0) {
      because(
          d, i, Lever::kMigReshape, WhyCode::kReshaped,
          fmt::format("+{} pods, MIG enabled on an idle GPU (every GPU of the node resets)", g));
    }
    gained += g;
  }
  return gained;
}

void PlanBuilder::whyModeUnchanged(const WorkloadDemand& d, std::size_t i,
                                   const std::vector<int>& idle) {
  const NodeState& n = snap_.nodes[i];
  if (idle.empty()) return;
  const std::string gpus = fmt::format("GPU {} {} idle with MIG disabled", fmt::join(idle, ","),
                                       idle.size() == 1 ? "is" : "are");
  if (!d.policy->migModeChange.enabled) {
    because(d, i, Lever::kMigReshape, WhyCode::kMigModeOff,
            gpus +
                "; the policy's migModeChange is off (enabling MIG resets every GPU of the "
                "node, and some platforms reboot it)");
  } else if (n.hasGpuPods) {
    because(d, i, Lever::kMigReshape, WhyCode::kMigModeBusyNode,
            gpus + ", but the node holds GPU pods and a MIG mode change resets every GPU of it");
  }
}

int PlanBuilder::reshapeMixed(const WorkloadDemand& d, std::size_t i, int need, bool switchMode) {
  const NodeState& n = snap_.nodes[i];
  const std::string base(unsharedResourceName(d.resource));
  const MigProfile* profile = profileForResource(*n.model, base);
  if (profile == nullptr || !filterFor(*d.policy).allows(*profile)) {
    if (switchMode) return 0;  // said in the first pass
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
  std::vector<int> idleDisabled;  // idle whole GPUs: MIG could be enabled there
  for (std::size_t gpu = 0; gpu < nodes_[i].gpus.size() && gained < need; ++gpu) {
    const MigGpuSetting& cur = nodes_[i].gpus[gpu];
    migGpus += cur.migEnabled ? 1 : 0;
    busy += cur.migEnabled && n.gpus[gpu].busy ? 1 : 0;
    if (!cur.migEnabled && !n.gpus[gpu].busy && !nodes_[i].reshaped[gpu])
      idleDisabled.push_back(static_cast<int>(gpu));
    // A MIG mode change needs a GPU reset of the whole node (reshapeFor's second pass, on nodes
    // without GPU pods); the first pass changes geometry only.
    if (nodes_[i].reshaped[gpu] || cur.migEnabled == switchMode || n.gpus[gpu].busy) continue;
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
  if (gained > 0) return gained;
  if (switchMode) {
    because(d, i, Lever::kMigReshape, WhyCode::kNoReshapeGain,
            "no allowed geometry of the idle GPUs with MIG disabled adds a pod");
    return 0;
  }
  if (migGpus > 0 || idleDisabled.empty()) because(d, noReshapeGain(n, migGpus, busy));
  whyModeUnchanged(d, i, idleDisabled);
  return 0;
}

int PlanBuilder::reshapeSingle(const WorkloadDemand& d, std::size_t i) {
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
  std::optional<ResourceCounts> savedDevices = w.devices;
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

void PlanBuilder::restoreMig(const WorkloadDemand& d, int floorPods) {
  for (auto it = d.eligibleNodes.rbegin(); it != d.eligibleNodes.rend(); ++it) {
    const std::size_t i = *it;
    const NodeState& n = snap_.nodes[i];
    WorkingNode& w = nodes_[i];
    if (!n.restoreGpus || !n.migManaged() || n.hasGpuPods || burstNodes_.contains(i) ||
        grantedNodes_.contains(i) || !changeable(d, i) || n.restoreGpus->size() != w.gpus.size() ||
        std::any_of(w.reshaped.begin(), w.reshaped.end(), [](bool b) { return b; })) {
      continue;
    }
    bool changes = false;
    bool sameMode = true;
    for (std::size_t gpu = 0; gpu < w.gpus.size(); ++gpu) {
      const MigGpuSetting& to = (*n.restoreGpus)[gpu];
      sameMode = sameMode && to.migEnabled == w.gpus[gpu].migEnabled;
      changes = changes || to != w.gpus[gpu];
    }
    // Switching MIG off again is a mode change: only when the policy allows those (the node holds
    // no GPU pod, checked above).
    if (!changes || (!sameMode && !d.policy->migModeChange.enabled)) continue;
    const WorkingNode saved = w;
    for (std::size_t gpu = 0; gpu < w.gpus.size(); ++gpu) {
      if ((*n.restoreGpus)[gpu] != w.gpus[gpu]) setSetting(i, gpu, (*n.restoreGpus)[gpu]);
    }
    if (ceiling(d) < floorPods) {
      w = saved;
      continue;
    }
    notes_.push_back(fmt::format("{}/{}: giving back {}'s MIG geometry (idle since the burst)",
                                 d.ns, d.name, n.name));
  }
}

std::optional<MigReconfigure> PlanBuilder::migAction(std::size_t i) const {
  const WorkingNode& w = nodes_[i];
  const NodeState& n = snap_.nodes[i];
  MigReconfigure a;
  a.node = n.name;
  for (std::size_t gpu = 0; gpu < w.gpus.size(); ++gpu) {
    const MigGpuSetting& from = n.gpus[gpu].setting;
    if (w.reshaped[gpu] && w.gpus[gpu] != from) {
      a.gpus.push_back({static_cast<int>(gpu), from.geometry, w.gpus[gpu].geometry, from.migEnabled,
                        w.gpus[gpu].migEnabled});
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

}  // namespace gpuscale::partition::detail
