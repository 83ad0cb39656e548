#include "gpuscale/reconciler/pod_gpu_use.h"

#include <string_view>

#include <fmt/format.h>

namespace gpuscale::reconciler {
namespace {

using nlohmann::json;

constexpr std::string_view kNvidiaPrefix = "nvidia.com/";

const json& member(const json& object, const char* key) {
  static const json kNull;
  return object.is_object() && object.contains(key) ? object[key] : kNull;
}

// The first nvidia.com/* resource in `resources`' requests or limits, or "".
std::string gpuResourceIn(const json& resources) {
  for (const char* field : {"requests", "limits"}) {
    const json& list = member(resources, field);
    if (!list.is_object()) continue;
    for (const auto& [name, _] : list.items()) {
      if (name.rfind(kNvidiaPrefix, 0) == 0) return name;
    }
  }
  return {};
}

bool hasClaims(const json& resources) {
  const json& claims = member(resources, "claims");
  return claims.is_array() && !claims.empty();
}

// The GPU use of one container of kind `what` ("container", "init container", ...), or "".
std::string containerUse(const json& c, std::string_view what) {
  const std::string name = member(c, "name").is_string() ? c["name"].get<std::string>() : "";
  const json& resources = member(c, "resources");
  if (auto res = gpuResourceIn(resources); !res.empty()) {
    return fmt::format("{} \"{}\" requests {}", what, name, res);
  }
  if (hasClaims(resources)) return fmt::format("{} \"{}\" uses a resource claim", what, name);
  return {};
}

bool isSidecar(const json& initContainer) {
  const json& policy = member(initContainer, "restartPolicy");
  return policy.is_string() && policy.get<std::string>() == "Always";
}

}  // namespace

std::string gpuUseOf(const kube::Object& pod) {
  const json& status = member(pod, "status");
  const json& phase = member(status, "phase");
  if (phase.is_string() && (phase == "Succeeded" || phase == "Failed")) return {};
  const json& spec = member(pod, "spec");
  const json& containers = member(spec, "containers");
  if (containers.is_array()) {
    for (const auto& c : containers) {
      if (auto use = containerUse(c, "container"); !use.empty()) return use;
    }
  }
  const json& inits = member(spec, "initContainers");
  if (inits.is_array()) {
    for (const auto& c : inits) {
      auto use = containerUse(c, isSidecar(c) ? "sidecar container" : "init container");
      if (!use.empty()) return use;
    }
  }
  if (auto res = gpuResourceIn(member(spec, "resources")); !res.empty()) {
    return "pod-level resources request " + res;
  }
  const json& claims = member(spec, "resourceClaims");
  if (claims.is_array() && !claims.empty()) {
    const json& first = claims.front();
    const std::string name =
        member(first, "name").is_string() ? first["name"].get<std::string>() : "";
    return fmt::format("resource claim \"{}\" (Dynamic Resource Allocation)", name);
  }
  return {};
}

}  // namespace gpuscale::reconciler
