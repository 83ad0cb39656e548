// Explain: the answer to "why was my HPA not raised?", from the state a reconcile pass plans from.
// Shared by `gpuscale-reconciler explain` against a live cluster (the objects the controller
// watches, listed once) and against a `kubectl get ... -o json` dump (the input of `plan`).
//
// explainHpas() runs the controller's own pass (pass.h: the state store's records give cooldowns,
// original maxReplicas and raises in flight, nodes with an operation in flight or backing off are
// held, the per-GPU mapping clears `busy` when given and a workload is blocked, the planner plans)
// and takes each HPA's reasons from its plan (partition/why_not.h). What stops an HPA before the
// planner sees it is said here: no policy manages it (or its annotation names a policy that does
// not admit it), its scale target is missing or requests no nvidia.com/ resource (for pods that
// claim devices through DRA: why their claims cannot be counted), or an earlier raise is in
// flight.
//
// Thread safety: pure functions apart from the mapping, which may call Prometheus (call from a
// thread that may block).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/reconciler/gpu_pod_mapping.h"
#include "gpuscale/reconciler/pass.h"

namespace gpuscale::reconciler {

struct HpaExplanation {
  std::string ns, name;
  // Set when something outside the planner decides (then `why` is empty): the sentence.
  std::string outside;
  std::optional<partition::HpaWhy> why;  // the planner's reasons, when it planned the HPA
  // Where the HPA's ceiling is written (HpaState::ceilingField): "maxReplicas", or the KEDA
  // ScaledObject that owns the HPA ("ScaledObject NAME spec.maxReplicaCount").
  std::string ceilingField;
  // For a GPUCapacityRequest: what its status says now ("granted 2 of 8 replicas; Granted False
  // WaitingForReshape: ...", or "no status yet"); "" for an HPA.
  std::string requestState;
  // The plan's actions this HPA's answer refers to: its maxReplicas change and the changes on the
  // nodes its reasons name.
  std::vector<partition::PlanAction> actions;
};

// How a GPU node offers its GPUs (partition::CapacityModel): "device plugin", "DRA static" or
// "DRA partitionable", and for a DRA node its pool (DraPool::describe).
struct NodeModel {
  std::string name, model, detail;
};

// The answer: one explanation per HPA asked about, the model every GPU node follows (a node with
// nvidia.com/ allocatable or a gpu.nvidia.com ResourceSlice pool), and the objects the pass could
// not read (it planned as if they were absent).
struct Explanations {
  std::vector<HpaExplanation> hpas;
  std::vector<NodeModel> nodes;
  std::vector<partition::SkippedObject> skipped;
};

struct ExplainRequest {
  std::string ns, name;  // "" = every HPA a policy manages
  partition::TimePoint now;
  GpuPodMapping* gpuPods = nullptr;  // null: the node-level rule
  // HPAs whose scale target kind is not read (scale_target_watch.h: listScaleTargets), explained
  // as TargetNotRead with the reason.
  std::vector<partition::SkippedObject> targetsNotRead = {};
};

// Why the planner never sees `hpa` (an HPA, or the HpaState of a GPUCapacityRequest), as
// "CODE: sentence" (NotManaged, TargetNotFound, ClaimsNotCounted, NoGpuRequest, or RaiseInFlight
// from the state store's `records`), or "" when it plans it. Also what the status of a request the
// planner never sees says (request_status.h).
std::string outsideThePlanner(const partition::HpaState& hpa,
                              const partition::ClusterSnapshot& snapshot,
                              const partition::PolicySet& policies,
                              const std::map<std::string, std::string>& records);

// The explanations of a pass (pass.h): the planner's reasons from its plan, and what stopped an
// HPA before the planner (`records` are the state store's data the pass was given); a named HPA
// that does not read is explained as NotRead. Errors: a named HPA that does not exist (not found).
core::Result<Explanations> explainPass(const Pass& pass, const partition::PolicySet& policies,
                                       const std::map<std::string, std::string>& records,
                                       const ExplainRequest& request);

// The pass over `dump` (the cluster's objects with `kind` set, including the reconciler's state
// ConfigMap `stateConfigMap` when there is one), explained. Errors: a dump the snapshot cannot be
// built from, or a named HPA that does not exist (not found).
core::Result<Explanations> explainHpas(const nlohmann::json& dump,
                                       const std::string& stateConfigMap,
                                       const partition::PolicySet& policies,
                                       const ExplainRequest& request);

// {"hpas": [...], "nodes": [{"name","model","detail"}], "skipped": [{"kind","namespace","name",
// "reason","message"}]} ("nodes" only when there is a GPU node, "skipped" only when some object
// was skipped).
nlohmann::ordered_json explanationsJson(const Explanations& explanations);
// One block per HPA, then the GPU nodes' models, then the skipped objects.
std::string explanationsText(const Explanations& explanations);

}  // namespace gpuscale::reconciler
