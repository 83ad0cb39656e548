#include "gpuscale/reconciler/reconciler_metrics.h"

#include "gpuscale/core/metric_families.h"

namespace gpuscale::reconciler {

ReconcilerMetrics::ReconcilerMetrics(std::shared_ptr<prometheus::Registry> registry)
    : registry_(std::move(registry)),
      reconciles_(core::counterFamily(*registry_, "gpuscale_reconciler_reconciles_total",
                                      "Reconcile passes by result")),
      actions_(core::counterFamily(*registry_, "gpuscale_reconciler_actions_total",
                                   "Partition and maxReplicas actions by kind and outcome")),
      ceilingToCapacity_(
          core::histogramFamily(
              *registry_, "gpuscale_reconciler_ceiling_to_capacity_seconds",
              "Seconds from a partition change being requested for an HPA at its ceiling "
              "to its raised maxReplicas")
              .Add({}, prometheus::Histogram::BucketBoundaries{5, 10, 20, 30, 60, 120, 300, 600,
                                                               1200})),
      nodesInFlight_(core::gauge(*registry_, "gpuscale_reconciler_nodes_in_flight",
                                 "Nodes with a partition change in flight")),
      leader_(core::gauge(*registry_, "gpuscale_reconciler_is_leader",
                          "1 when this replica holds the leader lease")),
      reloadOk_(core::gauge(*registry_, "gpuscale_config_last_reload_successful",
                            "Whether the last policy file (re)load succeeded")),
      reloads_(core::counter(*registry_, "gpuscale_config_reloads_total",
                             "Policy file reload attempts")),
      gpuMapping_(
          core::counterFamily(*registry_, "gpuscale_reconciler_gpu_mapping_total",
                              "Per-GPU mapping answers: per_gpu, or fallback_<cause> when a node "
                              "was treated as all busy")),
      writeRetries_(
          core::counterFamily(*registry_, "gpuscale_reconciler_write_retries_total",
                              "Writes retried after a 409 Conflict (reason conflict) or a 429 "
                              "TooManyRequests (reason throttled), by resource")),
      degraded_(core::counterFamily(
          *registry_, "gpuscale_reconciler_degraded_total",
          "Occurrences of degraded conditions (failed writes, snapshot errors), "
          "each logged once until it clears")),
      objectsSkipped_(
          core::counterFamily(*registry_, "gpuscale_reconciler_objects_skipped_total",
                              "Objects planned as if absent because they do not read, by kind "
                              "and reason (malformed, out_of_range); counted once each until "
                              "they read again")),
      nodeStalls_(
          core::counterFamily(*registry_, "gpuscale_reconciler_node_stalls_total",
                              "Node stalls undone (a reshape taint without an operation removed, "
                              "a MIG change on a node without mig-manager ended, mig-manager "
                              "failed, stuck or silent past its bound), by cause")),
      policyIgnored_(
          core::counter(*registry_, "gpuscale_reconciler_policy_annotations_ignored_total",
                        "HPAs found naming a partition policy that is not defined or does "
                        "not admit them (counted once until the HPA changes)")),
      policyIgnoredNow_(core::gauge(*registry_, "gpuscale_reconciler_policy_annotations_ignored",
                                    "HPAs whose partition-policy annotation is ignored now")),
      observeMode_(core::gauge(*registry_, "gpuscale_reconciler_observe_mode",
                               "1 when the reconciler only observes (--mode=observe): it plans and "
                               "records Events but writes nothing else")),
      wouldBeWrites_(core::counterFamily(*registry_, "gpuscale_reconciler_would_be_writes_total",
                                         "Writes withheld in observe mode, by verb and resource")),
      wouldAct_(
          core::counterFamily(*registry_, "gpuscale_reconciler_would_act_total",
                              "Plan actions not taken in observe mode, by kind (counted once per "
                              "action while it stays in the plan)")),
      passDuration_(core::histogramFamily(*registry_, "gpuscale_reconciler_pass_duration_seconds",
                                          "Seconds one reconcile pass took (snapshot from the "
                                          "caches, plan and actuation), by result")),
      optionalServed_(core::gaugeFamily(
          *registry_, "gpuscale_reconciler_optional_resource_served",
          "1 while a collection the cluster may not serve (DRA objects, optional CRDs) is watched "
          "and planned on, 0 while passes plan without it (not served, not readable)")) {
  reloadOk_.Set(1);
}

void ReconcilerMetrics::reconcile(const std::string& result) {
  reconciles_.Add({{"result", result}}).Increment();
}

void ReconcilerMetrics::action(const std::string& kind, const std::string& outcome) {
  actions_.Add({{"kind", kind}, {"outcome", outcome}}).Increment();
}

void ReconcilerMetrics::passDuration(const std::string& result, double seconds) {
  static const prometheus::Histogram::BucketBoundaries kBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                                0.5,   1,    2.5,   5,    10};
  passDuration_.Add({{"result", result}}, kBuckets).Observe(seconds);
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

void ReconcilerMetrics::optionalResourceServed(const std::string& resource, bool served) {
  optionalServed_.Add({{"resource", resource}}).Set(served ? 1 : 0);
}

}  // namespace gpuscale::reconciler
