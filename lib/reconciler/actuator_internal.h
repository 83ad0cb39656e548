// Pieces shared by the actuator's sources: API references, the per-node work derived from a plan,
// and small readers of Kubernetes objects.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpuscale/kube/client.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/reconciler/actuator.h"
#include "gpuscale/reconciler/intent.h"

namespace gpuscale::reconciler {

struct KubeActuator::NodeWork {
  std::string node;
  NodeIntent intent;  // plan, started and previous are filled in when it starts
};

namespace actuator_detail {

kube::ResourceRef nodeRef(const std::string& name);
kube::ResourceRef hpaRef(const std::string& ns, const std::string& name);
kube::ResourceRef configMapRef(const std::string& ns, const std::string& name);

// One operation per node: the plan's MIG change if it has one, carrying the node's time-slicing
// changes as its follow-up (NodeIntent::then), else its time-slicing changes combined into one
// config.
std::vector<KubeActuator::NodeWork> nodeWorkFor(const partition::Plan& plan,
                                                const partition::ClusterSnapshot& snapshot);

// A fresh read of a Node or an HPA through the one reader (partition/kube_objects.h). Errors: the
// GET's, or Status::invalid when the object does not read.
core::Result<partition::NodeObject> getNode(kube::KubeClient& client, const std::string& name);
core::Result<partition::HpaState> getHpa(kube::KubeClient& client, const std::string& ns,
                                         const std::string& name);

// status.allocatable[resource] of a Node (0 when absent).
std::int64_t allocatableOf(const partition::NodeObject& node, const std::string& resource);
bool allocatableMatches(const partition::NodeObject& node,
                        const std::map<std::string, std::int64_t>& want);

}  // namespace actuator_detail
}  // namespace gpuscale::reconciler
