// One reconcile pass: the cluster's objects, the reconciler's recorded state, the policies, the
// HPAs' history and an optional per-GPU mapping in; the snapshot, the demands and the plan (with
// the planner's reasons, partition/why_not.h) out. The controller, `gpuscale-reconciler plan` and
// `gpuscale-reconciler explain` all call runPass(), so what is planned offline or explained is what
// the live controller would do with the same inputs.
//
// The steps, in order:
//   1. the typed snapshot from the objects (partition/snapshot.h);
//   2. each HPA's recorded state from the state store's records (hpa_state_store.h): last change
//      (cooldowns), maxReplicas before the first raise, the raise in flight (its promise);
//   3. nodes where a gpuscale operation runs (intent annotation) or a failed one backs off are held
//      in transition, so the planner leaves them alone (holdNodesInFlight);
//   4. each HPA's remembered observations (anticipation) and the measured lead times;
//   5. the demand of every managed HPA (partition/demand.h);
//   6. when a workload the planner may grow is blocked and a mapping is given, the per-GPU mapping
//      clears `busy` on GPUs it reports idle (gpu_pod_mapping.h);
//   7. the planner (partition/planner.h).
// What differs between callers is only what they can know: the controller passes its history and
// measured lead times (offline there are none: one observation, the policies' lead times) and its
// mapping (offline only when `explain` is given the Prometheus flags).
//
// Thread safety: a function of its inputs, apart from the mapping, which may call Prometheus (call
// from a thread that may block).
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/lead_time.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/reconciler/gpu_pod_mapping.h"
#include "gpuscale/reconciler/hpa_history.h"

namespace gpuscale::reconciler {

struct PassInputs {
  const partition::PolicySet* policies = nullptr;  // required
  // The state store's ConfigMap data (HpaStateStore::records(), or stateRecordsIn() of a dump).
  std::map<std::string, std::string> stateRecords;
  const HpaHistory* history = nullptr;  // null: this pass's observation only
  partition::MeasuredLeadTimes leadTimes;
  GpuPodMapping* gpuPods = nullptr;  // null: the node-level rule
  partition::TimePoint now;
};

// What a pass decided, and from what. `workloads` point into `snapshot` and into the policies
// the pass was given: keep those alive as long as the Pass. Moving a Pass keeps the pointers valid
// (its vectors move their buffers).
struct Pass {
  partition::ClusterSnapshot snapshot;
  std::vector<partition::WorkloadDemand> workloads;  // every managed HPA, in flight or not
  partition::Plan plan;
  std::set<std::string> nodesWithIntent;                         // operations in flight
  std::set<std::pair<std::string, std::string>> hpasWithIntent;  // raises in flight
  // Nodes whose per-GPU mapping was settling (partition/lever_choice.h).
  int nodesSettling = 0;
};

// The pass over `items` (informer caches or a dump's objects). Errors: objects the snapshot cannot
// be built from.
core::Result<Pass> runPass(const std::vector<partition::KubeItem>& items, const PassInputs& in);
// The same over a `kubectl get ... -o json` dump (a List, an array of Lists or objects), as
// `plan --from` and `explain` run it: the state records are those of the ConfigMap named
// `stateConfigMap` in the dump (in.stateRecords is ignored). Errors: a dump the snapshot cannot be
// built from.
core::Result<Pass> runPassOnDump(const nlohmann::json& dump, PassInputs in,
                                 std::string_view stateConfigMap);

// Marks in transition the nodes where a gpuscale operation runs (intent annotation) or a failed
// one backs off, so the planner leaves them alone; returns the nodes with an intent.
std::set<std::string> holdNodesInFlight(partition::ClusterSnapshot& snapshot,
                                        partition::TimePoint now);

}  // namespace gpuscale::reconciler
