// The reconciler's /metrics: reconcile passes (and their duration), actions by kind and outcome,
// time from a ceiling to the capacity behind a raised maxReplicas, nodes in flight, leadership,
// policy reloads and per-GPU mapping answers (and their fallbacks to the node-level rule), writes
// retried after a conflict or throttling, degraded conditions (degraded_log.h; a full state store
// is what="state_store_full"), node stalls undone by cause (node_transitions.h), objects skipped
// because they do not read, HPAs whose policy annotation is ignored because the policy does not
// admit them, and whether each collection the cluster may not serve is planned on.
//
// Thread safety: prometheus-cpp metrics are thread-safe.
#pragma once

#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace gpuscale::reconciler {

class ReconcilerMetrics {
 public:
  explicit ReconcilerMetrics(std::shared_ptr<prometheus::Registry> registry);

  void reconcile(const std::string& result);  // ok | error | skipped
  // The wall time of one pass that ran (result ok | error).
  void passDuration(const std::string& result, double seconds);
  void action(const std::string& kind, const std::string& outcome);
  void ceilingToCapacity(double seconds);
  void nodesInFlight(int n);
  void leader(bool isLeader);
  // One per-GPU mapping answer: per_gpu, or fallback_<cause> (see dcgm_gpu_pod_mapping.h).
  void gpuMapping(const std::string& result);
  // A write retried: reason conflict (409) or throttled (429); resource is the plural name.
  void writeRetried(const std::string& resource, const std::string& reason);
  // One occurrence of a degraded condition (`what` is a fixed word, see degraded_log.h).
  void degraded(const std::string& what);
  // An object newly found that does not read (partition/snapshot.h: SkippedObject): its kind and
  // the reason ("malformed" | "out_of_range").
  void objectSkipped(const std::string& kind, const std::string& reason);
  // A node stall undone, by cause (node_transitions.h: NodeTransition::stall).
  void nodeStall(const std::string& cause);
  // An HPA newly found naming a policy that does not admit it (policy.h), and how many do now.
  void policyAnnotationIgnored();
  void policyAnnotationsIgnoredNow(int n);
  // `n` policy reload attempts, the last of which succeeded or not.
  void configReloads(int n, bool lastOk);
  // Observe mode (observe_mode.h): 1 while it is on, a write withheld (verb create | update |
  // patch | delete, resource the plural name) and a plan action not taken (kind as in action()).
  void observeMode(bool on);
  void wouldBeWrite(const std::string& verb, const std::string& resource);
  void wouldAct(const std::string& kind);
  // Whether a collection that may not be served (optional_informer.h) is planned on now;
  // `resource` is "<plural>.<group>".
  void optionalResourceServed(const std::string& resource, bool served);
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& reconciles_;
  prometheus::Family<prometheus::Counter>& actions_;
  prometheus::Histogram& ceilingToCapacity_;
  prometheus::Gauge& nodesInFlight_;
  prometheus::Gauge& leader_;
  prometheus::Gauge& reloadOk_;
  prometheus::Counter& reloads_;
  prometheus::Family<prometheus::Counter>& gpuMapping_;
  prometheus::Family<prometheus::Counter>& writeRetries_;
  prometheus::Family<prometheus::Counter>& degraded_;
  prometheus::Family<prometheus::Counter>& objectsSkipped_;
  prometheus::Family<prometheus::Counter>& nodeStalls_;
  prometheus::Counter& policyIgnored_;
  prometheus::Gauge& policyIgnoredNow_;
  prometheus::Gauge& observeMode_;
  prometheus::Family<prometheus::Counter>& wouldBeWrites_;
  prometheus::Family<prometheus::Counter>& wouldAct_;
  prometheus::Family<prometheus::Histogram>& passDuration_;
  prometheus::Family<prometheus::Gauge>& optionalServed_;
};

}  // namespace gpuscale::reconciler
