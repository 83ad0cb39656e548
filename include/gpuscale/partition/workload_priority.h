// Workload priority: the number contention (contention.h) orders blocked HPAs by, and where it came
// from. The policy's `priority` wins when the policy gives one (the operator wrote it); otherwise
// the priority admission resolved for the HPA's target pods: their `spec.priority`, which the
// Priority admission plugin sets from the pod's PriorityClass (or the cluster's global default)
// and checks, and the scheduler orders pending pods by. Never a class name from a pod template:
// a template is tenant text that no admission has checked yet (a namespace may be allowed to
// create pods of a class only up to a ResourceQuota scoped by PriorityClass, and admission
// rejects a pod whose class does not exist).
//
// The lowest `spec.priority` among the target's active pods counts: a rollout to a higher class
// counts once every pod runs with it, and one pod cannot speak for the rest. A pod without
// `spec.priority` (the admission plugin off) counts as 0, as the scheduler counts it; a target
// without active pods gets 0.
//
// Thread safety: values; pure functions.
#pragma once

#include <string>
#include <vector>

#include "gpuscale/partition/policy.h"

namespace gpuscale::partition {

struct PodState;

struct WorkloadPriority {
  int value = 0;
  // For Events and `explain`: "policy inference", "pods' spec.priority (lowest of 3 pods)",
  // "no pods yet (0)".
  std::string source;
};

// The priority of an HPA that uses `policy` and whose target's pods are `pods` (finished and
// terminating ones are not counted).
WorkloadPriority workloadPriority(const Policy& policy, const std::vector<const PodState*>& pods);

}  // namespace gpuscale::partition
