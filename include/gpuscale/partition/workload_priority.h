// Workload priority: the number contention (contention.h) orders blocked HPAs by, and where it came
// from. The policy's `priority` wins when the policy gives one; otherwise the PriorityClass of the
// HPA's target pods decides, as the scheduler would: the pod template's `priorityClassName` ->
// that PriorityClass's `value`; a template without one gets the value of the cluster's
// `globalDefault: true` class; no class at all gives 0.
//
// Why PriorityClass: operators already rank their workloads with it for the scheduler (pending pods
// are scheduled in its order); gpuscale ranks the same workloads the same way unless a policy says
// otherwise.
//
// Limits: a class named by the template but absent from the cluster gives 0 (pods naming it are
// rejected at admission, so the template cannot run as it is); the value is read from the template,
// not from running pods (pods created before a template change keep their old priority).
//
// Thread safety: values; pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "gpuscale/partition/policy.h"

namespace gpuscale::partition {

struct ScaleTarget;

// The cluster's PriorityClasses (scheduling.k8s.io/v1): name -> `value`, and the name of the one
// with `globalDefault: true` (when several claim it, the lowest value, as admission picks).
struct PriorityClasses {
  std::map<std::string, int> values;
  std::optional<std::string> globalDefault;
};

struct WorkloadPriority {
  int value = 0;
  // For Events and `explain`: "policy inference", "PriorityClass gold",
  // "PriorityClass gold (not found: 0)", "global default PriorityClass base", "none (0)".
  std::string source;
};

// The priority of an HPA that uses `policy` and scales `target` (nullptr: no target known).
WorkloadPriority workloadPriority(const Policy& policy, const ScaleTarget* target,
                                  const PriorityClasses& classes);

}  // namespace gpuscale::partition
