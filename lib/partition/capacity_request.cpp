#include "gpuscale/partition/capacity_request.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "capacity_request_snapshot.h"
#include "gpuscale/partition/object_fields.h"
#include "gpuscale/partition/resource_names.h"
#include "object_meta.h"

namespace gpuscale::partition {
namespace {

using nlohmann::json;

constexpr std::string_view kHpaNamePrefix = "GPUCapacityRequest.";

CapacityRequest parseRequest(const json& object) {
  const auto [meta, spec, status] = detail::parseParts(object);
  CapacityRequest r;
  r.meta = meta;
  r.generation = fields::integer(fields::object(object, "metadata"), "generation", 0, 0);
  const json* ref = fields::find(spec, "workloadRef");
  if (ref != nullptr) {
    const json& w = fields::object(spec, "workloadRef");
    r.workloadApiVersion = fields::string(w, "apiVersion");
    r.workloadKind = fields::string(w, "kind");
    r.workloadName = fields::string(w, "name");
    if (r.workloadKind.empty() || r.workloadName.empty())
      fields::fail("spec.workloadRef", "a kind and a name");
  }
  r.resource = fields::string(spec, "resource");
  if ((ref != nullptr) == !r.resource.empty())
    fields::fail("spec", "exactly one of workloadRef and resource");
  if (!r.resource.empty() && !r.resource.starts_with(kNvidiaPrefix))
    fields::fail("spec.resource", "an nvidia.com/ resource (nvidia.com/mig-1g.5gb)");
  r.replicas = fields::int32(spec, "replicas", 0, 0);
  if (fields::find(spec, "priority") != nullptr) r.priority = fields::int32(spec, "priority");
  r.grantedReplicas = fields::int32(status, "grantedReplicas", 0, 0);
  r.observedGeneration = fields::integer(status, "observedGeneration", 0);
  for (const auto& c : fields::array(status, "conditions")) {
    r.conditions.push_back({fields::string(c, "type"), fields::string(c, "status"),
                            fields::string(c, "reason"), fields::string(c, "message")});
  }
  return r;
}

}  // namespace

core::Result<CapacityRequest> readCapacityRequest(const json& object) {
  return fields::readFields("", [&] { return parseRequest(object); });
}

std::string capacityRequestHpaName(std::string_view name) {
  return std::string(kHpaNamePrefix) + std::string(name);
}

std::optional<std::string> capacityRequestName(std::string_view hpaName) {
  if (!hpaName.starts_with(kHpaNamePrefix)) return std::nullopt;
  return std::string(hpaName.substr(kHpaNamePrefix.size()));
}

std::string demandOwnerName(std::string_view ns, std::string_view hpaName) {
  if (auto request = capacityRequestName(hpaName))
    return fmt::format("{} {}/{}", kCapacityRequestKind, ns, *request);
  return fmt::format("HPA {}/{}", ns, hpaName);
}

WorkloadPriority requestPriority(const Policy& policy, const CapacityRequest& request,
                                 const std::vector<const PodState*>& pods) {
  const WorkloadPriority admitted = workloadPriority(policy, pods);
  if (policy.priority) return admitted;
  const int asked = request.priority.value_or(0);
  const bool anyPod = std::any_of(pods.begin(), pods.end(),
                                  [](const PodState* p) { return p->active() && !p->terminating; });
  if (anyPod && admitted.value < asked) {
    return {admitted.value,
            fmt::format("request spec.priority {} capped by {}", asked, admitted.source)};
  }
  return {asked, request.priority ? "request spec.priority" : "request without spec.priority (0)"};
}

CapacityRequestVerdict capacityRequestVerdict(int wanted, int granted, bool inFlight, bool changing,
                                              std::string_view why) {
  CapacityRequestVerdict v;
  v.granted = granted;
  v.condition.type = std::string(kGrantedCondition);
  const std::string shortBy = why.empty() ? std::string() : fmt::format(": {}", why);
  if (granted >= wanted) {
    v.condition.status = "True";
    v.condition.reason = "Granted";
    v.condition.message = fmt::format("{} of {} replicas granted", granted, wanted);
  } else if (inFlight || changing) {
    v.condition.status = "False";
    v.condition.reason = "WaitingForReshape";
    v.condition.message = fmt::format(
        "{} of {} replicas granted; partitions are being changed for the rest", granted, wanted);
  } else if (granted > 0) {
    v.condition.status = "False";
    v.condition.reason = "PartiallyGranted";
    v.condition.message = fmt::format("{} of {} replicas granted{}", granted, wanted, shortBy);
  } else {
    v.condition.status = "False";
    v.condition.reason = "Unsatisfiable";
    v.condition.message = fmt::format("0 of {} replicas granted{}", wanted, shortBy);
  }
  return v;
}

CapacityRequestVerdict invalidCapacityRequest(std::string_view message) {
  return {0, {std::string(kGrantedCondition), "False", "Invalid", std::string(message)}};
}

HpaState capacityRequestHpa(std::shared_ptr<const CapacityRequest> request) {
  const CapacityRequest& r = *request;
  HpaState h;
  h.ns = r.meta.ns;
  h.name = capacityRequestHpaName(r.meta.name);
  h.uid = r.meta.uid;
  h.labels = r.meta.labels;
  h.annotations = r.meta.annotations;
  h.minReplicas = 0;
  h.maxReplicas = h.currentReplicas = h.desiredReplicas = r.grantedReplicas;
  if (r.forResource()) {
    h.targetApiVersion = fmt::format("{}/{}", kCapacityRequestGroup, kCapacityRequestVersion);
    h.targetKind = std::string(kCapacityRequestKind);
    h.targetName = r.meta.name;
  } else {
    h.targetApiVersion = r.workloadApiVersion;
    h.targetKind = r.workloadKind;
    h.targetName = r.workloadName;
  }
  h.capacityRequest = std::move(request);
  return h;
}

namespace detail {

void addCapacityRequests(std::vector<CapacityRequest> requests, ClusterSnapshot& snap) {
  for (auto& request : requests) {
    auto shared = std::make_shared<const CapacityRequest>(std::move(request));
    const CapacityRequest& r = *shared;
    if (r.forResource()) {
      ScaleTarget t;
      t.kind = std::string(kCapacityRequestKind);
      t.ns = r.meta.ns;
      t.name = r.meta.name;
      t.uid = r.meta.uid;
      t.gpuRequests[r.resource] = 1;
      snap.targets.push_back(std::move(t));
    }
    snap.hpas.push_back(capacityRequestHpa(std::move(shared)));
  }
}

std::vector<const PodState*> requestPods(const ClusterSnapshot& snap, const ScaleTarget& target) {
  std::vector<const PodState*> out;
  if (target.gpuRequests.empty()) return out;
  const std::string& resource = target.gpuRequests.begin()->first;
  auto it = std::lower_bound(snap.pods.begin(), snap.pods.end(), target.ns,
                             [](const PodState& p, const std::string& ns) { return p.ns < ns; });
  for (; it != snap.pods.end() && it->ns == target.ns; ++it) {
    if (it->active() && !it->terminating && it->gpuRequests.contains(resource)) out.push_back(&*it);
  }
  return out;
}

}  // namespace detail
}  // namespace gpuscale::partition
