#include "dra_snapshot.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuscale/partition/resource_names.h"

namespace gpuscale::partition::detail {
namespace {

std::string key(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

// Attributes and capacities that tell devices of one kind apart (identity, placement); a selector
// that names none of them treats devices that agree on the rest alike.
bool identityName(std::string_view name) {
  for (std::string_view id : {"uuid", "UUID", "pci", "numa", "memorySlice", "memory-slice"}) {
    if (name.find(id) != std::string_view::npos) return true;
  }
  return false;
}

// One published device (or exemplar) of a DRA node.
struct Candidate {
  const DraDevice* device;
  std::string kind;
  bool published;
};

// Candidates that agree on everything but identity, with one representative.
struct CandidateGroup {
  const DraDevice* representative;
  std::string kind;
  std::vector<const Candidate*> members;
};

std::string signature(const DraDevice& d, const std::string& kind) {
  std::string s = kind + "\x1f" + (d.allowMultipleAllocations ? "1" : "0");
  for (const auto& [name, v] : d.attributes) {
    if (identityName(name)) continue;
    s +=
        fmt::format("\x1f{}={}:{}:{}:{}", name, static_cast<int>(v.type), v.text, v.number, v.flag);
  }
  for (const auto& [name, q] : d.capacity) {
    if (!identityName(name)) s += fmt::format("\x1f{}#{}", name, q);
  }
  return s;
}

class ClaimResolver {
 public:
  ClaimResolver(const ClusterSnapshot& snapshot, const DraObjects& objects) {
    for (const auto& c : objects.classes) classes_[c.meta.name] = &c;
    for (const auto& t : objects.templates) templates_[key(t.meta.ns, t.meta.name)] = &t;
    for (const auto& node : snapshot.nodes) {
      if (node.draPool == nullptr) continue;
      for (const auto& d : node.draPool->devices)
        candidates_.push_back({&d, draDeviceKind(d), true});
      exemplars_.push_back(draExemplars(node));
    }
    for (const auto& list : exemplars_) {
      for (const auto& d : list) candidates_.push_back({&d, draDeviceKind(d), false});
    }
    std::map<std::string, std::size_t> bySignature;
    for (const auto& c : candidates_) {
      auto [it, added] = bySignature.emplace(signature(*c.device, c.kind), groups_.size());
      if (added) groups_.push_back({c.device, c.kind, {}});
      groups_[it->second].members.push_back(&c);
    }
  }

  ClaimDemand resolve(const ScaleTarget& t) const {
    ClaimDemand cd;
    if (classes_.empty() && templates_.empty() && candidates_.empty()) {
      cd.problem =
          "no DRA object (ResourceSlice, DeviceClass, ResourceClaimTemplate) was read: claims are "
          "counted from a dump that lists them (plan --from, explain --from)";
      return cd;
    }
    std::vector<const DraDeviceRequest*> requests;
    cd.problem = collectRequests(t, requests);
    if (!cd.problem.empty()) return cd;
    for (const auto* r : requests) {
      std::vector<DeviceSelector> matcher;
      if (auto p = compileRequest(*r, matcher); !p.empty()) {
        cd.problem = p;
        return cd;
      }
      cd.matchers.push_back(std::move(matcher));
      cd.perPod += r->count;
    }
    std::optional<std::set<std::string>> common;
    bool selective = false, same = true;
    for (const auto& matcher : cd.matchers) {
      std::set<std::string> kinds;
      selective = kindsOf(matcher, kinds) || selective;
      if (common && *common != kinds) same = false;
      if (!common) common = std::move(kinds);
    }
    if (common->empty()) {
      cd.problem =
          "no device the DRA nodes publish, or a MIG reshape of them would, matches its claims";
    } else if (same && common->size() == 1 && !selective && !common->begin()->empty()) {
      cd.resource = *common->begin();
    } else if (cd.matchers.size() == 1) {
      cd.ownKind = true;
      cd.resource = "dra:" + t.ns + "/" + t.name;
    } else {
      cd.problem = "its claims' requests select devices of different kinds: not modelled";
    }
    return cd;
  }

 private:
  // The requests of `t`'s template claims that take devices, or why they cannot be counted.
  std::string collectRequests(const ScaleTarget& t,
                              std::vector<const DraDeviceRequest*>& out) const {
    std::vector<std::string> shared;
    bool templated = false;
    for (const auto& ref : t.claims) {
      if (ref.templateName.empty()) {
        shared.push_back(ref.claimName);
        continue;
      }
      templated = true;
      auto it = templates_.find(key(t.ns, ref.templateName));
      if (it == templates_.end())
        return fmt::format("ResourceClaimTemplate {}/{} does not exist", t.ns, ref.templateName);
      const DraClaimSpec& spec = it->second->spec;
      if (spec.constraints && spec.requests.size() > 1)
        return fmt::format(
            "ResourceClaimTemplate {}: constraints between requests are not modelled",
            ref.templateName);
      for (const auto& r : spec.requests) {
        const std::string where =
            fmt::format("ResourceClaimTemplate {} request {}", ref.templateName, r.name);
        if (r.firstAvailable)
          return where + ": firstAvailable (a prioritized list) is not modelled";
        if (r.alternatives.empty()) continue;
        const DraDeviceRequest& a = r.alternatives.front();
        if (a.adminAccess || a.count <= 0) continue;  // takes no device from others
        if (a.allocationMode != "ExactCount")
          return where + ": allocationMode " + a.allocationMode + " is not modelled";
        if (a.consumesCapacity) return where + ": consumable capacity is not modelled";
        out.push_back(&a);
      }
    }
    if (!templated) {
      return fmt::format("its pods share the ResourceClaim(s) {}: more pods need no more devices",
                         fmt::join(shared, ", "));
    }
    if (out.empty()) return "its claims request no device";
    return {};
  }

  std::string compileRequest(const DraDeviceRequest& r, std::vector<DeviceSelector>& out) const {
    auto cls = classes_.find(r.deviceClassName);
    if (cls == classes_.end())
      return fmt::format("DeviceClass {} does not exist", r.deviceClassName);
    auto add = [&](const std::string& e, const std::string& owner) -> std::string {
      auto s = DeviceSelector::compile(e);
      if (!s) return fmt::format("{} selector `{}`: {}", owner, e, s.status().message());
      out.push_back(std::move(*s));
      return {};
    };
    for (const auto& e : cls->second->selectors) {
      if (auto p = add(e, "DeviceClass " + r.deviceClassName); !p.empty()) return p;
    }
    for (const auto& e : r.selectors) {
      if (auto p = add(e, "request " + r.name); !p.empty()) return p;
    }
    return {};
  }

  static bool matchesAll(const std::vector<DeviceSelector>& matcher, const DraDevice& d) {
    for (const auto& s : matcher) {
      auto m = s.matches(d, kNvidiaGpuDriver);
      if (!m || !*m) return false;
    }
    return true;
  }

  // The kinds `matcher` accepts among the candidates; true when it accepts some published devices
  // of a kind but not others (or devices of no kind the planner knows).
  bool kindsOf(const std::vector<DeviceSelector>& matcher, std::set<std::string>& kinds) const {
    bool identity = false;
    for (const auto& s : matcher) identity = identity || identityName(s.expression());
    std::map<std::string, std::pair<bool, bool>> seen;  // published kind -> (some in, some out)
    auto note = [&](const Candidate& c, bool in) {
      if (in) kinds.insert(c.kind);
      if (!c.published) return;
      auto& [someIn, someOut] = seen[c.kind];
      (in ? someIn : someOut) = true;
    };
    for (const auto& g : groups_) {
      if (!identity) {
        const bool in = matchesAll(matcher, *g.representative);
        for (const Candidate* c : g.members) note(*c, in);
        continue;
      }
      for (const Candidate* c : g.members) note(*c, matchesAll(matcher, *c->device));
    }
    bool selective = kinds.contains("");
    for (const auto& [kind, inOut] : seen) {
      if (kinds.contains(kind) && inOut.second) selective = true;
    }
    return selective;
  }

  std::map<std::string, const DeviceClassObject*> classes_;
  std::map<std::string, const ResourceClaimTemplateObject*> templates_;
  std::vector<std::vector<DraDevice>> exemplars_;
  std::vector<Candidate> candidates_;
  std::vector<CandidateGroup> groups_;
};

// A DRA node's capacity, used devices and devices per kind.
void applyPool(NodeState& node, DraPool pool) {
  auto shared = std::make_shared<const DraPool>(std::move(pool));
  node.draPool = shared;
  node.capacityModel =
      shared->partitionable() ? CapacityModel::kDraPartitionable : CapacityModel::kDraStatic;
  node.migStrategy = MigStrategy::kMixed;
  node.sharedReplicas.clear();
  std::erase_if(node.allocatable,
                [](const auto& kv) { return kv.first.rfind(kNvidiaPrefix, 0) == 0; });
  const ResourceCounts capacity = draCapacity(*shared);
  node.allocatable.insert(capacity.begin(), capacity.end());
  node.used = draUsed(*shared);
  node.devices = capacity;
}

// Per DRA node, the devices a selective claim (ClaimDemand::ownKind) counts under its own kind.
void applyOwnKind(ClusterSnapshot& snapshot, const ClaimDemand& cd) {
  auto match = [&](const DraDevice& d) { return cd.matches(d); };
  for (auto& node : snapshot.nodes) {
    if (node.draPool == nullptr) continue;
    const DraPool& pool = *node.draPool;
    std::int64_t held = 0;
    for (const auto& d : pool.devices) held += pool.allocated.contains(d.name) && match(d) ? 1 : 0;
    const std::int64_t n = held + allocatableDevices(pool, match);
    node.used[cd.resource] = held;
    node.allocatable[cd.resource] = node.devices[cd.resource] = n;
  }
}

}  // namespace

void applyDra(ClusterSnapshot& snapshot, const DraObjects& objects) {
  std::map<std::string, DraPool> pools = draPools(objects.slices, objects.claims);
  std::map<std::string, const DraPool*> byPoolName;
  for (auto& node : snapshot.nodes) {
    auto it = pools.find(node.name);
    if (it == pools.end()) continue;
    applyPool(node, std::move(it->second));
    byPoolName[node.draPool->name] = node.draPool.get();
  }
  std::map<std::string, const ResourceClaimObject*> claims;
  for (const auto& c : objects.claims) claims[key(c.meta.ns, c.meta.name)] = &c;

  const ClaimResolver resolver(snapshot, objects);
  std::vector<std::pair<const ScaleTarget*, ClaimDemand>> demands;
  for (auto& t : snapshot.targets) {
    // A pod that asks for device-plugin resources too is planned on those.
    if (t.claims.empty() || !t.gpuRequests.empty()) continue;
    ClaimDemand cd = resolver.resolve(t);
    if (!cd.problem.empty()) {
      t.draProblem = cd.problem;
      continue;
    }
    t.gpuRequests[cd.resource] = cd.perPod;
    t.draClaims = true;
    if (cd.ownKind) applyOwnKind(snapshot, cd);
    demands.emplace_back(&t, std::move(cd));
  }

  for (std::size_t i = 0; i < snapshot.pods.size(); ++i) {
    if (snapshot.pods[i].claims.empty()) continue;
    // The snapshot's own copy: the pod cache's record stays as read.
    PodState& pod = snapshot.pods.mutableAt(i);
    std::int64_t devices = 0;
    for (const auto& ref : pod.claims) {
      if (ref.templateName.empty() || ref.claimName.empty()) continue;  // shared: not the pod's
      auto claim = claims.find(key(pod.ns, ref.claimName));
      if (claim == claims.end()) continue;
      for (const auto& a : claim->second->allocated) {
        auto pool = byPoolName.find(a.pool);
        if (a.driver != kNvidiaGpuDriver || pool == byPoolName.end()) continue;
        ++devices;
        for (const auto& d : pool->second->devices) {
          if (d.name != a.device) continue;
          if (auto kind = draDeviceKind(d); !kind.empty()) ++pod.gpuRequests[kind];
          break;
        }
      }
    }
    for (const auto& [target, cd] : demands) {
      if (!target->selects(pod)) continue;
      if (cd.ownKind) pod.gpuRequests[cd.resource] = devices;
      if (pod.claimsUnallocatable && pod.nodeName.empty()) pod.insufficientResource = cd.resource;
    }
  }
}

}  // namespace gpuscale::partition::detail
