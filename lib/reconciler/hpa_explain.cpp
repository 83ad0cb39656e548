#include "gpuscale/reconciler/hpa_explain.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/capacity_request.h"
#include "gpuscale/partition/dra_capacity.h"
#include "gpuscale/partition/resource_names.h"
#include "gpuscale/reconciler/hpa_state_store.h"

namespace gpuscale::reconciler {
namespace {

namespace partition = gpuscale::partition;
using OrderedJson = nlohmann::ordered_json;

// What a request's status says (HpaExplanation::requestState); "" for an HPA.
std::string requestStateOf(const partition::HpaState& hpa) {
  if (!hpa.capacityRequest) return "";
  const partition::CapacityRequest& r = *hpa.capacityRequest;
  std::string out = fmt::format("granted {} of {} replicas", r.grantedReplicas, r.replicas);
  for (const auto& c : r.conditions) {
    if (c.type != partition::kGrantedCondition) continue;
    out += fmt::format("; {} {} {}: {}", c.type, c.status, c.reason, c.message);
    if (r.observedGeneration != r.generation) {
      out += fmt::format(" (of generation {}, not yet {})", r.observedGeneration, r.generation);
    }
    return out;
  }
  return out + "; no Granted condition yet";
}

std::string nodeOf(const partition::PlanAction& action) {
  if (const auto* m = std::get_if<partition::MigReconfigure>(&action)) return m->node;
  if (const auto* t = std::get_if<partition::TimeSlicingChange>(&action)) return t->node;
  return "";
}

std::vector<partition::PlanAction> actionsFor(const partition::Plan& plan,
                                              const partition::HpaWhy& why) {
  std::set<std::string> nodes;
  for (const auto& r : why.reasons) {
    if (r.code == partition::WhyCode::kReshaped || r.code == partition::WhyCode::kTimeSliced)
      nodes.insert(r.node);
  }
  std::vector<partition::PlanAction> out;
  for (const auto& a : plan.actions) {
    const auto* max = std::get_if<partition::SetMaxReplicas>(&a);
    if (max != nullptr ? max->ns == why.ns && max->name == why.name : nodes.contains(nodeOf(a)))
      out.push_back(a);
  }
  return out;
}

// Every GPU node's model, in name order.
std::vector<NodeModel> nodeModels(const partition::ClusterSnapshot& snapshot) {
  std::vector<NodeModel> out;
  for (const auto& n : snapshot.nodes) {
    const bool gpus = std::any_of(n.allocatable.begin(), n.allocatable.end(), [](const auto& kv) {
      return kv.first.starts_with(partition::kNvidiaPrefix);
    });
    if (!gpus && !n.dra()) continue;
    out.push_back({n.name, std::string(partition::capacityModelName(n.capacityModel)),
                   n.draPool != nullptr ? n.draPool->describe() : std::string()});
  }
  return out;
}

}  // namespace

std::string outsideThePlanner(const partition::HpaState& hpa,
                              const partition::ClusterSnapshot& snapshot,
                              const partition::PolicySet& policies,
                              const std::map<std::string, std::string>& records) {
  const auto match = policies.match(hpa.ns, hpa.name, hpa.labels, hpa.annotations);
  if (match.policy == nullptr) {
    if (!match.ignored.empty()) {
      return fmt::format("NotManaged: its annotation {}={} is ignored: the policy {}",
                         k8s::kPolicyAnnotation, match.ignored, match.ignoredWhy);
    }
    return fmt::format(
        "NotManaged: no policy manages it (list it in a policy's hpas, or annotate it {}=POLICY "
        "in a namespace the policy's hpaNamespaces admit)",
        k8s::kPolicyAnnotation);
  }
  const partition::ScaleTarget* target = snapshot.target(hpa.ns, hpa.targetKind, hpa.targetName);
  if (target == nullptr) {
    return fmt::format("TargetNotFound: its scale target {} {} is not in the cluster state",
                       hpa.targetKind, hpa.targetName);
  }
  if (target->gpuRequests.empty() && !target->draProblem.empty()) {
    return fmt::format("ClaimsNotCounted: the pods of {} {} claim devices through DRA, but {}",
                       hpa.targetKind, hpa.targetName, target->draProblem);
  }
  if (target->gpuRequests.empty()) {
    return fmt::format("NoGpuRequest: the pods of {} {} request no nvidia.com/ resource",
                       hpa.targetKind, hpa.targetName);
  }
  auto it = records.find(hpaRecordKey(hpa.ns, hpa.name));
  if (it == records.end()) return "";
  auto record = decodeHpaRecord(it->second);
  if (!record || record->uid != hpa.uid || !record->intent) return "";
  const HpaIntent& intent = *record->intent;
  return fmt::format(
      "RaiseInFlight: an earlier raise of maxReplicas {} -> {} waits for its node operations on "
      "[{}] (started {}); the planner looks again once they finish, and meanwhile keeps what it "
      "promised for it when HPAs compete",
      intent.from, intent.to, fmt::join(intent.nodes, ", "), core::formatRfc3339(intent.started));
}

core::Result<Explanations> explainPass(const Pass& pass, const partition::PolicySet& policies,
                                       const std::map<std::string, std::string>& records,
                                       const ExplainRequest& request) {
  const partition::ClusterSnapshot& snapshot = pass.snapshot;
  Explanations out;
  out.skipped = snapshot.skipped;
  out.skipped.insert(out.skipped.end(), request.targetsNotRead.begin(),
                     request.targetsNotRead.end());
  out.nodes = nodeModels(snapshot);
  if (!request.name.empty() && snapshot.hpa(request.ns, request.name) == nullptr) {
    for (const auto& s : snapshot.skipped) {
      if (s.kind == "HorizontalPodAutoscaler" && s.ns == request.ns && s.name == request.name) {
        out.hpas.push_back(
            {s.ns,
             s.name,
             "NotRead: " + s.message + "; the reconciler plans as if this HPA were absent",
             std::nullopt,
             "maxReplicas",
             "",
             {}});
        return out;
      }
    }
    return core::Status::notFound(
        fmt::format("HorizontalPodAutoscaler {}/{} not found", request.ns, request.name));
  }
  for (const auto& hpa : snapshot.hpas) {
    const bool asked = request.name.empty() || (hpa.ns == request.ns && hpa.name == request.name);
    if (!asked) continue;
    std::string why = outsideThePlanner(hpa, snapshot, policies, records);
    for (const auto& s : request.targetsNotRead) {
      if (why.starts_with("TargetNotFound") && s.ns == hpa.ns && s.name == hpa.name) {
        why = "TargetNotRead: " + s.message;
      }
    }
    // Asked for all: only the HPAs a policy manages.
    if (!request.name.empty() || !why.starts_with("NotManaged")) {
      out.hpas.push_back({hpa.ns,
                          hpa.name,
                          std::move(why),
                          std::nullopt,
                          hpa.ceilingField(),
                          requestStateOf(hpa),
                          {}});
    }
  }
  const partition::Plan& plan = pass.plan;
  for (auto& e : out.hpas) {
    auto it = std::find_if(plan.why.begin(), plan.why.end(),
                           [&](const auto& w) { return w.ns == e.ns && w.name == e.name; });
    if (it == plan.why.end()) continue;
    if (!e.outside.empty()) {
      // A raise in flight: what contention made of its promise, when it had to share.
      for (const auto& r : it->reasons) {
        if (r.code == partition::WhyCode::kShared) e.outside += "; shared: " + r.detail;
      }
      continue;
    }
    e.why = *it;
    e.actions = actionsFor(plan, *it);
  }
  return out;
}

core::Result<Explanations> explainHpas(const nlohmann::json& dump,
                                       const std::string& stateConfigMap,
                                       const partition::PolicySet& policies,
                                       const ExplainRequest& request) {
  PassInputs in;
  in.policies = &policies;
  in.gpuPods = request.gpuPods;
  in.now = request.now;
  auto pass = runPassOnDump(dump, in, stateConfigMap);
  if (!pass) return pass.status();
  return explainPass(*pass, policies, stateRecordsIn(dump, stateConfigMap), request);
}

nlohmann::ordered_json explanationsJson(const Explanations& explanations) {
  OrderedJson items = OrderedJson::array();
  for (const auto& e : explanations.hpas) {
    OrderedJson item =
        e.why ? partition::whyToJson(*e.why) : OrderedJson{{"namespace", e.ns}, {"name", e.name}};
    if (!e.outside.empty()) item["verdict"] = "not planned: " + e.outside;
    if (e.ceilingField != "maxReplicas") item["ceilingHeldBy"] = e.ceilingField;
    if (!e.requestState.empty()) item["requestStatus"] = e.requestState;
    OrderedJson actions = OrderedJson::array();
    for (const auto& a : e.actions) actions.push_back(partition::actionToJson(a));
    item["actions"] = std::move(actions);
    items.push_back(std::move(item));
  }
  OrderedJson out{{"hpas", std::move(items)}};
  if (!explanations.nodes.empty()) {
    OrderedJson nodes = OrderedJson::array();
    for (const auto& n : explanations.nodes) {
      OrderedJson node{{"name", n.name}, {"model", n.model}};
      if (!n.detail.empty()) node["detail"] = n.detail;
      nodes.push_back(std::move(node));
    }
    out["nodes"] = std::move(nodes);
  }
  if (!explanations.skipped.empty()) {
    OrderedJson skipped = OrderedJson::array();
    for (const auto& s : explanations.skipped) {
      skipped.push_back({{"kind", s.kind},
                         {"namespace", s.ns},
                         {"name", s.name},
                         {"reason", s.reason},
                         {"message", s.message}});
    }
    out["skipped"] = std::move(skipped);
  }
  return out;
}

std::string explanationsText(const Explanations& explanations) {
  std::string out;
  if (explanations.hpas.empty()) out = "No HPA is managed by the partition policies.\n";
  for (const auto& e : explanations.hpas) {
    if (!e.outside.empty()) {
      out +=
          fmt::format("{}: not planned: {}\n", partition::demandOwnerName(e.ns, e.name), e.outside);
      if (!e.requestState.empty()) out += "  request status: " + e.requestState + "\n";
      continue;
    }
    if (!e.why) continue;
    out += partition::whyToText(*e.why);
    if (e.ceilingField != "maxReplicas") out += "  ceiling held by: " + e.ceilingField + "\n";
    if (!e.requestState.empty()) out += "  request status: " + e.requestState + "\n";
    for (const auto& a : e.actions) out += "  plan: " + partition::actionToText(a) + "\n";
  }
  if (!explanations.nodes.empty()) {
    out += "GPU nodes (how each offers its GPUs):\n";
    for (const auto& n : explanations.nodes) {
      out += fmt::format("  {}: {}{}{}\n", n.name, n.model, n.detail.empty() ? "" : ", ", n.detail);
    }
  }
  if (!explanations.skipped.empty()) {
    out += "Objects that do not read (planned as if absent):\n";
    for (const auto& s : explanations.skipped) {
      out += fmt::format("  {} {}: {} ({})\n", s.kind, s.ns.empty() ? s.name : s.ns + "/" + s.name,
                         s.message, s.reason);
    }
  }
  return out;
}

}  // namespace gpuscale::reconciler
