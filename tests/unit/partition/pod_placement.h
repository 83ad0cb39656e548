// Where a test pod stands, as kube-apiserver holds it after the scheduler's verdict: shared by the
// object builders of the partition tests (kube_objects.h, dra_objects.h) and the planner benchmark
// (bench/scale), so each spells out only what its pods ask for.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpuscale::partition::testing {

// Sets `pod`'s status: Running and Ready on `node` (spec.nodeName set), or, when `node` is empty,
// Pending with the PodScheduled=False condition of an unschedulable pod, carrying the scheduler's
// `unschedulableMessage`.
inline void placePod(nlohmann::json& pod, const std::string& node,
                     const std::string& unschedulableMessage) {
  if (node.empty()) {
    pod["status"] = {{"phase", "Pending"},
                     {"conditions", nlohmann::json::array({{{"type", "PodScheduled"},
                                                            {"status", "False"},
                                                            {"reason", "Unschedulable"},
                                                            {"message", unschedulableMessage}}})}};
    return;
  }
  pod["spec"]["nodeName"] = node;
  pod["status"] = {
      {"phase", "Running"},
      {"conditions", nlohmann::json::array({{{"type", "Ready"}, {"status", "True"}}})}};
}

}  // namespace gpuscale::partition::testing
