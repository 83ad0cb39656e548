// Reading Pods and the pod templates of workloads (kube_objects.h): GPU requests as the scheduler
// counts them, DRA claims, and what makes a pod a GPU user.
#include <algorithm>

#include <fmt/format.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/object_fields.h"
#include "gpuscale/partition/resource_names.h"
#include "object_meta.h"

namespace gpuscale::partition {
namespace {

namespace fields = partition::fields;
using nlohmann::json;

// The nvidia.com/* entries of a requests or limits map, rounded up to whole units.
ResourceCounts gpuResources(const json& resources, std::string_view field) {
  ResourceCounts out;
  const json& list = fields::object(resources, field);
  for (const auto& [name, value] : list.items()) {
    if (name.rfind(kNvidiaPrefix, 0) != 0) continue;
    out[name] = detail::deviceCount(list, name, std::string(field) + "." + name);
  }
  return out;
}

// One container's GPU requests: max(request, limit) per resource (extended resources need both
// equal).
ResourceCounts containerGpuRequests(const json& container) {
  const json& res = fields::object(container, "resources");
  ResourceCounts requests = gpuResources(res, "requests");
  for (const auto& [name, n] : gpuResources(res, "limits")) {
    requests[name] = std::max(requests[name], n);
  }
  return requests;
}

bool isSidecar(const json& initContainer) {
  return fields::string(initContainer, "restartPolicy") == "Always";
}

// Per-pod GPU requests as the scheduler counts them (the pod's effective request): per resource,
// the larger of what runs together (app containers plus sidecars, the init containers with
// restartPolicy Always) and the peak of the init phase (each other init container plus the
// sidecars started before it).
ResourceCounts podGpuRequests(const json& podSpec) {
  ResourceCounts sidecars, initPeak;
  for (const auto& c : fields::array(podSpec, "initContainers")) {
    const ResourceCounts requests = containerGpuRequests(c);
    if (isSidecar(c)) {
      for (const auto& [name, n] : requests) sidecars[name] += n;
      continue;
    }
    for (const auto& [name, n] : requests) {
      auto before = sidecars.find(name);
      const std::int64_t alongside = before == sidecars.end() ? 0 : before->second;
      initPeak[name] = std::max(initPeak[name], n + alongside);
    }
  }
  ResourceCounts out = sidecars;
  for (const auto& c : fields::array(podSpec, "containers")) {
    for (const auto& [name, n] : containerGpuRequests(c)) out[name] += n;
  }
  for (const auto& [name, n] : initPeak) out[name] = std::max(out[name], n);
  return out;
}

// Dynamic Resource Allocation claims (the pod's, or a container's reference to one): the device a
// claim binds is not in the pod, so the pod may hold any GPU of its node.
bool hasResourceClaims(const json& podSpec) {
  if (!fields::array(podSpec, "resourceClaims").empty()) return true;
  for (const char* list : {"containers", "initContainers"}) {
    for (const auto& c : fields::array(podSpec, list)) {
      if (!fields::array(fields::object(c, "resources"), "claims").empty()) return true;
    }
  }
  return false;
}

// The first nvidia.com/* resource in `resources`' requests or limits, or "".
std::string gpuResourceIn(const json& resources) {
  for (const char* field : {"requests", "limits"}) {
    for (const auto& [name, _] : fields::object(resources, field).items()) {
      if (name.rfind(kNvidiaPrefix, 0) == 0) return name;
    }
  }
  return {};
}

// The GPU use of one container of kind `what` ("container", "init container", ...), or "".
std::string containerUse(const json& c, std::string_view what) {
  const std::string name = fields::string(c, "name");
  const json& resources = fields::object(c, "resources");
  if (auto res = gpuResourceIn(resources); !res.empty()) {
    return fmt::format("{} \"{}\" requests {}", what, name, res);
  }
  if (!fields::array(resources, "claims").empty()) {
    return fmt::format("{} \"{}\" uses a resource claim", what, name);
  }
  return {};
}

// What makes a pod with spec `podSpec` a GPU user, or "": a container, an init container or a
// sidecar asking for an nvidia.com/ resource, pod-level resources that do, or DRA claims (which
// device a claim binds is not in the pod: assume the worst).
std::string gpuUseOf(const json& podSpec) {
  for (const auto& c : fields::array(podSpec, "containers")) {
    if (auto use = containerUse(c, "container"); !use.empty()) return use;
  }
  for (const auto& c : fields::array(podSpec, "initContainers")) {
    auto use = containerUse(c, isSidecar(c) ? "sidecar container" : "init container");
    if (!use.empty()) return use;
  }
  if (auto res = gpuResourceIn(fields::object(podSpec, "resources")); !res.empty()) {
    return "pod-level resources request " + res;
  }
  const json& claims = fields::array(podSpec, "resourceClaims");
  if (!claims.empty()) {
    return fmt::format("resource claim \"{}\" (Dynamic Resource Allocation)",
                       fields::string(claims.front(), "name"));
  }
  return {};
}

// spec.resourceClaims; for a pod, with the names of the claims made from its templates
// (status.resourceClaimStatuses).
std::vector<PodClaimRef> claimRefs(const json& podSpec, const json& status) {
  std::vector<PodClaimRef> out;
  for (const auto& c : fields::array(podSpec, "resourceClaims")) {
    out.push_back({fields::string(c, "name"), fields::string(c, "resourceClaimTemplateName"),
                   fields::string(c, "resourceClaimName")});
  }
  for (const auto& made : fields::array(status, "resourceClaimStatuses")) {
    const std::string name = fields::string(made, "name");
    for (auto& ref : out) {
      if (ref.name == name && !ref.templateName.empty())
        ref.claimName = fields::string(made, "resourceClaimName");
    }
  }
  return out;
}

// The GPU memory one pod of spec `podSpec` and annotations `annotations` takes per device
// (gpu_memory_need.h), from its containers' command lines.
GpuMemoryNeed podGpuMemoryNeed(const json& podSpec, const Labels& annotations) {
  std::vector<ContainerCommandLine> lines;
  for (const auto& c : fields::array(podSpec, "containers")) {
    lines.push_back({fields::string(c, "name"), fields::string(c, "image"),
                     fields::strings(c, "command"), fields::strings(c, "args"),
                     !gpuResourceIn(fields::object(c, "resources")).empty()});
  }
  return gpuMemoryNeed(lines, annotations);
}

// The pod's PodScheduled=False/Unschedulable condition, if any.
const json* unschedulableCondition(const json& status) {
  for (const auto& c : fields::array(status, "conditions")) {
    if (fields::string(c, "type") == "PodScheduled" && fields::string(c, "status") == "False" &&
        fields::string(c, "reason") == "Unschedulable") {
      return &c;
    }
  }
  return nullptr;
}

// "nvidia.com/..." of an "Insufficient nvidia.com/..." scheduling failure, else "".
std::string insufficientResource(const json& condition) {
  const std::string message = fields::string(condition, "message");
  auto at = message.find("Insufficient nvidia.com/");
  if (at == std::string::npos) return {};
  auto begin = at + std::string_view("Insufficient ").size();
  auto end = message.find_first_of(" ,", begin);
  return message.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

PodState parsePod(const json& item) {
  const auto [meta, spec, status] = detail::parseParts(item);
  PodState p;
  detail::copyIdentity(meta, p);
  p.terminating = meta.deleting;
  p.nodeName = fields::string(spec, "nodeName");
  p.phase = fields::string(status, "phase", "Pending");
  p.nominated = !fields::string(status, "nominatedNodeName").empty();
  p.gpuRequests = podGpuRequests(spec);
  p.gpuUse = gpuUseOf(spec);
  p.startedAt = core::parseRfc3339(fields::string(status, "startTime"));
  if (!p.startedAt) p.startedAt = meta.createdAt;
  p.resourceClaims = hasResourceClaims(spec);
  p.claims = claimRefs(spec, status);
  p.gpuMemory = podGpuMemoryNeed(spec, meta.annotations);
  if (fields::find(spec, "priority") != nullptr) p.priority = fields::int32(spec, "priority");
  for (const auto& c : fields::array(status, "conditions")) {
    if (fields::string(c, "type") == "Ready") p.ready = fields::string(c, "status") == "True";
  }
  if (p.phase == "Pending" && p.nodeName.empty()) {
    if (const json* c = unschedulableCondition(status)) {
      p.unschedulable = true;
      p.insufficientResource = insufficientResource(*c);
      // kube-scheduler's DynamicResources plugin, when no node has the devices the claims need.
      p.claimsUnallocatable =
          fields::string(*c, "message").find("cannot allocate all claims") != std::string::npos;
    }
  }
  return p;
}

ScaleTarget parseWorkload(const json& item, std::string_view kind) {
  const auto [meta, spec, status] = detail::parseParts(item);
  ScaleTarget t;
  t.kind = kind;
  detail::copyIdentity(meta, t);
  t.specReplicas = fields::int32(spec, "replicas", 1, 0);
  t.selector = fields::stringMap(fields::object(spec, "selector"), "matchLabels");
  const json& tpl = fields::object(spec, "template");
  detail::readTemplate(fields::object(tpl, "spec"),
                       fields::stringMap(fields::object(tpl, "metadata"), "annotations"), t);
  return t;
}

}  // namespace

namespace detail {

void readTemplate(const json& podSpec, const Labels& annotations, ScaleTarget& target) {
  target.gpuRequests = podGpuRequests(podSpec);
  target.nodeSelector = fields::stringMap(podSpec, "nodeSelector");
  target.gpuMemory = podGpuMemoryNeed(podSpec, annotations);
  target.claims = claimRefs(podSpec, json::object());
}

}  // namespace detail

core::Result<PodState> readPod(const json& object) {
  return fields::readFields("", [&] { return parsePod(object); });
}

core::Result<ScaleTarget> readWorkload(const json& object, std::string_view kind) {
  return fields::readFields("", [&] { return parseWorkload(object, kind); });
}

core::Result<ScaleTarget> readPodTemplate(const json& podSpec) {
  return fields::readFields("", [&] {
    ScaleTarget t;
    detail::readTemplate(podSpec, {}, t);
    return t;
  });
}

}  // namespace gpuscale::partition
