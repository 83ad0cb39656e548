#include "gpuscale/reconciler/pass.h"

#include "gpuscale/partition/planner.h"
#include "gpuscale/reconciler/hpa_state_store.h"

namespace gpuscale::reconciler {
namespace {

Pass planOver(partition::ClusterSnapshot snapshot, const PassInputs& in) {
  Pass pass;
  pass.snapshot = std::move(snapshot);
  partition::ClusterSnapshot& snap = pass.snapshot;
  // The HPA-side state comes from the reconciler's own records, never from the HPAs' annotations.
  applyHpaRecords(in.stateRecords, snap);
  for (const auto& hpa : snap.hpas) {
    if (hpa.promisedMaxReplicas) pass.hpasWithIntent.insert({hpa.ns, hpa.name});
  }
  pass.nodesWithIntent = holdNodesInFlight(snap, in.now);
  if (in.history != nullptr) in.history->applyTo(snap);
  snap.measuredLeadTimes = in.leadTimes;
  pass.workloads = partition::assessWorkloads(snap, *in.policies, in.now);
  // HPAs with a change in flight are planned too (WorkloadDemand::inFlight): the planner neither
  // grows nor shrinks them, but reserves what their change promised them in contention. Only a
  // workload the planner may grow can lead to a reshape: Prometheus is asked only then.
  bool blocked = false;
  for (const auto& w : pass.workloads) blocked = blocked || (w.blocked && !w.inFlight);
  if (in.gpuPods != nullptr && blocked) {
    applyGpuMapping(snap, *in.gpuPods, in.now);
    for (const auto& node : snap.nodes) pass.nodesSettling += node.gpuMappingSettling;
  }
  pass.plan = partition::planPartitions(snap, pass.workloads, in.now);
  return pass;
}

}  // namespace

std::set<std::string> holdNodesInFlight(partition::ClusterSnapshot& snapshot,
                                        partition::TimePoint now) {
  std::set<std::string> withIntent;
  for (auto& node : snapshot.nodes) {
    if (node.hasIntent) withIntent.insert(node.name);
    if (node.hasIntent || (node.backoffUntil && *node.backoffUntil > now)) {
      node.inTransition = true;
    }
  }
  return withIntent;
}

core::Result<Pass> runPass(const std::vector<partition::KubeItem>& items, const PassInputs& in) {
  auto snapshot = partition::buildSnapshot(items);
  if (!snapshot) return snapshot.status();
  return planOver(std::move(*snapshot), in);
}

core::Result<Pass> runPassOnDump(const nlohmann::json& dump, PassInputs in,
                                 std::string_view stateConfigMap) {
  auto snapshot = partition::buildSnapshot(dump);
  if (!snapshot) return snapshot.status();
  in.stateRecords = stateRecordsIn(dump, stateConfigMap);
  return planOver(std::move(*snapshot), in);
}

}  // namespace gpuscale::reconciler
