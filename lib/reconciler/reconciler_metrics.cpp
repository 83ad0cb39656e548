#include "gpuscale/reconciler/reconciler_metrics.h"

namespace gpuscale::reconciler {

ReconcilerMetrics::ReconcilerMetrics(std::shared_ptr<prometheus::Registry> registry)
    : registry_(std::move(registry)),
      reconciles_(prometheus::BuildCounter()
                      .Name("gpuscale_reconciler_reconciles_total")
                      .Help("Reconcile passes by result")
                      .Register(*registry_)),
      actions_(prometheus::BuildCounter()
                   .Name("gpuscale_reconciler_actions_total")
                   .Help("Partition and maxReplicas actions by kind and outcome")
                   .Register(*registry_)),
      ceilingToCapacity_(
          prometheus::BuildHistogram()
              .Name("gpuscale_reconciler_ceiling_to_capacity_seconds")
              .Help("Seconds from a partition change being requested for an HPA at its ceiling "
                    "to its raised maxReplicas")
              .Register(*registry_)
              .Add({}, prometheus::Histogram::BucketBoundaries{5, 10, 20, 30, 60, 120, 300, 600,
                                                               1200})),
      nodesInFlight_(prometheus::BuildGauge()
                         .Name("gpuscale_reconciler_nodes_in_flight")
                         .Help("Nodes with a partition change in flight")
                         .Register(*registry_)
                         .Add({})),
      leader_(prometheus::BuildGauge()
                  .Name("gpuscale_reconciler_is_leader")
                  .Help("1 when this replica holds the leader lease")
                  .Register(*registry_)
                  .Add({})),
      reloadOk_(prometheus::BuildGauge()
                    .Name("gpuscale_config_last_reload_successful")
                    .Help("Whether the last policy file (re)load succeeded")
                    .Register(*registry_)
                    .Add({})),
      reloads_(prometheus::BuildCounter()
                   .Name("gpuscale_config_reloads_total")
                   .Help("Policy file reload attempts")
                   .Register(*registry_)
                   .Add({})),
      gpuMapping_(prometheus::BuildCounter()
                      .Name("gpuscale_reconciler_gpu_mapping_total")
                      .Help("Per-GPU mapping answers: per_gpu, or fallback_<cause> when a node "
                            "was treated as all busy")
                      .Register(*registry_)),
      writeRetries_(prometheus::BuildCounter()
                        .Name("gpuscale_reconciler_write_retries_total")
                        .Help("Writes retried after a 409 Conflict (reason conflict) or a 429 "
                              "TooManyRequests (reason throttled), by resource")
                        .Register(*registry_)),
      degraded_(prometheus::BuildCounter()
                    .Name("gpuscale_reconciler_degraded_total")
                    .Help("Occurrences of degraded conditions (failed writes, snapshot errors), "
                          "each logged once until it clears")
                    .Register(*registry_)),
      objectsSkipped_(prometheus::BuildCounter()
                          .Name("gpuscale_reconciler_objects_skipped_total")
                          .Help("Objects planned as if absent because they do not read, by kind "
                                "and reason (malformed, out_of_range); counted once each until "
                                "they read again")
                          .Register(*registry_)),
      nodeStalls_(prometheus::BuildCounter()
                      .Name("gpuscale_reconciler_node_stalls_total")
                      .Help("Node stalls undone (a reshape taint without an operation removed, "
                            "a MIG change on a node without mig-manager ended, mig-manager "
                            "failed, stuck or silent past its bound), by cause")
                      .Register(*registry_)),
      policyIgnored_(prometheus::BuildCounter()
                         .Name("gpuscale_reconciler_policy_annotations_ignored_total")
                         .Help("HPAs found naming a partition policy that is not defined or does "
                               "not admit them (counted once until the HPA changes)")
                         .Register(*registry_)
                         .Add({})),
      policyIgnoredNow_(prometheus::BuildGauge()
                            .Name("gpuscale_reconciler_policy_annotations_ignored")
                            .Help("HPAs whose partition-policy annotation is ignored now")
                            .Register(*registry_)
                            .Add({})),
      observeMode_(prometheus::BuildGauge()
                       .Name("gpuscale_reconciler_observe_mode")
                       .Help("1 when the reconciler only observes (--mode=observe): it plans and "
                             "records Events but writes nothing else")
                       .Register(*registry_)
                       .Add({})),
      wouldBeWrites_(prometheus::BuildCounter()
                         .Name("gpuscale_reconciler_would_be_writes_total")
                         .Help("Writes withheld in observe mode, by verb and resource")
                         .Register(*registry_)),
      wouldAct_(prometheus::BuildCounter()
                    .Name("gpuscale_reconciler_would_act_total")
                    .Help("Plan actions not taken in observe mode, by kind (counted once per "
                          "action while it stays in the plan)")
                    .Register(*registry_)) {
  reloadOk_.Set(1);
}

void ReconcilerMetrics::reconcile(const std::string& result) {
  reconciles_.Add({{"result", result}}).Increment();
}

void ReconcilerMetrics::action(const std::string& kind, const std::string& outcome) {
  actions_.Add({{"kind", kind}, {"outcome", outcome}}).Increment();
}

void ReconcilerMetrics::ceilingToCapacity(double seconds) { ceilingToCapacity_.Observe(seconds); }
void ReconcilerMetrics::nodesInFlight(int n) { nodesInFlight_.Set(n); }
void ReconcilerMetrics::leader(bool isLeader) { leader_.Set(isLeader ? 1 : 0); }

void ReconcilerMetrics::gpuMapping(const std::string& result) {
  gpuMapping_.Add({{"result", result}}).Increment();
}

void ReconcilerMetrics::writeRetried(const std::string& resource, const std::string& reason) {
  writeRetries_.Add({{"resource", resource}, {"reason", reason}}).Increment();
}

void ReconcilerMetrics::degraded(const std::string& what) {
  degraded_.Add({{"what", what}}).Increment();
}

void ReconcilerMetrics::objectSkipped(const std::string& kind, const std::string& reason) {
  objectsSkipped_.Add({{"kind", kind}, {"reason", reason}}).Increment();
}

void ReconcilerMetrics::nodeStall(const std::string& cause) {
  nodeStalls_.Add({{"cause", cause}}).Increment();
}

void ReconcilerMetrics::policyAnnotationIgnored() { policyIgnored_.Increment(); }
void ReconcilerMetrics::policyAnnotationsIgnoredNow(int n) { policyIgnoredNow_.Set(n); }

void ReconcilerMetrics::configReloads(int n, bool lastOk) {
  reloads_.Increment(n);
  reloadOk_.Set(lastOk ? 1 : 0);
}

void ReconcilerMetrics::observeMode(bool on) { observeMode_.Set(on ? 1 : 0); }

void ReconcilerMetrics::wouldBeWrite(const std::string& verb, const std::string& resource) {
  wouldBeWrites_.Add({{"verb", verb}, {"resource", resource}}).Increment();
}

void ReconcilerMetrics::wouldAct(const std::string& kind) {
  wouldAct_.Add({{"kind", kind}}).Increment();
}

}  // namespace gpuscale::reconciler
