// The reconcile loop: informers on Nodes, Pods, HPAs, Deployments, StatefulSets, the GPU
// Operator's ConfigMaps, where the cluster serves them (optional_informer.h) the DRA objects
// (ResourceSlices, DeviceClasses, ResourceClaimTemplates, ResourceClaims), plus one per other kind
// the HPAs scale through /scale (scale_target_watch.h), each cached object trimmed to the fields
// the readers read (partition/read_fields.h; ControllerOptions::trimCachedObjects), so the caches
// grow with the number of objects, not their size; Pods, the bulk, are read once per change into
// typed records and not kept as JSON at all (pod_cache.h); a pass on every change (coalesced) and
// every resync period; each pass is level-based: snapshot -> demand per managed HPA -> planner ->
// actuator, from the caches' current state only, so passes are idempotent and a restart simply runs
// the next one.
//
// Each pass reads the reconciler's state store (hpa_state_store.h) for the HPA-side state
// (cooldowns, original maxReplicas, intents); a pass that cannot read it acts on nothing. Before
// planning, nodes with an operation in flight (intent annotation) or backing off after a failure
// are marked in transition (the planner leaves them alone), and HPAs with an intent in the store
// are left out (their operation is still running). An HPA whose policy annotation names a policy
// that does not admit it is logged once and counted; state of HPAs that are gone, recreated or no
// longer managed is pruned from the store. When a workload is blocked and a per-GPU mapping is
// given, it clears `busy` on the GPUs the mapping reports idle (applyGpuMapping). With --dry-run
// nothing is written: the plan is logged and kept for /plan, and events only logged. In observe
// mode (observe_mode.h) the actuator is an ObservingActuator and the pass neither prunes the state
// store nor writes the HPA status annotation: Events are its only writes. Each pass
// ends by flushing the writes retried during it as Events (retried_writes.h). Conditions that
// persist across passes (a snapshot that cannot be built, a status annotation that cannot be
// written) are logged once until they clear and counted (degraded_log.h). An object that does not
// read stops nothing: the pass plans as if it were absent, and reportSkipped() says so once.
//
// Thread safety: start/stop from one thread; pass() from the loop thread (or a test);
// lastPlanJson()/synced() from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gpuscale/kube/client.h"
#include "gpuscale/kube/informer.h"
#include "gpuscale/partition/object_record.h"
#include "gpuscale/reconciler/actuator.h"
#include "gpuscale/reconciler/degraded_log.h"
#include "gpuscale/reconciler/event_recorder.h"
#include "gpuscale/reconciler/gpu_pod_mapping.h"
#include "gpuscale/reconciler/hpa_history.h"
#include "gpuscale/reconciler/hpa_state_store.h"
#include "gpuscale/reconciler/optional_informer.h"
#include "gpuscale/reconciler/pod_cache.h"
#include "gpuscale/reconciler/policy_source.h"
#include "gpuscale/reconciler/read_cache.h"
#include "gpuscale/reconciler/reconciler_metrics.h"
#include "gpuscale/reconciler/retried_writes.h"
#include "gpuscale/reconciler/scale_target_watch.h"

namespace gpuscale::reconciler {

// A kind the controller watches (ConfigMaps only in the operator's namespace); `explain` lists the
// same. An optional kind (the DRA kinds of resource.k8s.io/v1) may not be served by the cluster:
// it is watched through an OptionalInformer (optional_informer.h) and planned without when absent.
struct WatchedResource {
  const char* kind;
  const char* group;
  const char* version;
  const char* resource;
  bool operatorNamespaceOnly;
  bool optional;
};
std::span<const WatchedResource> watchedResources();

struct ControllerOptions {
  std::string operatorNamespace = "gpu-operator";
  StateStoreOptions state;  // where the HPA-side state lives (hpa_state_store.h)
  std::chrono::milliseconds resyncPeriod{30000};
  std::chrono::milliseconds minPassInterval{500};  // coalesces bursts of events
  bool dryRun = false;
  bool observe = false;  // observe mode: no state store pruning, no HPA status annotation
  // The informers keep only the fields the readers read (partition/read_fields.h); false caches
  // whole objects (the baseline the fleet benchmark measures trimming against).
  bool trimCachedObjects = true;
  // How often a collection that is not served is looked for again (optional_informer.h).
  std::chrono::milliseconds optionalRecheckPeriod{60000};
};

struct PassResult {
  bool planned = false;
  partition::Plan plan;
  ActuationReport report;
  std::string error;
  // Nodes whose per-GPU mapping was settling (partition/lever_choice.h): the loop looks again
  // soon, without waiting for an event.
  int nodesSettling = 0;
};

class Controller {
 public:
  Controller(std::shared_ptr<kube::KubeClient> client, std::shared_ptr<Actuator> actuator,
             std::shared_ptr<PolicySource> policies, std::shared_ptr<EventRecorder> events,
             std::shared_ptr<ReconcilerMetrics> metrics, ControllerOptions options,
             std::shared_ptr<GpuPodMapping> gpuPods = nullptr,
             std::shared_ptr<RetriedWrites> retried = nullptr);
  ~Controller();

  // Starts the informers and the loop; passes run only while isLeader() is true.
  void start(std::function<bool()> isLeader);
  void stop();
  bool synced() const;
  void trigger();

  // One pass over `objects` (Kubernetes objects of the watched kinds, each with `kind` set).
  PassResult pass(const std::vector<kube::Object>& objects, TimePoint now);
  // One pass over the informer caches, without copying their objects: the typed snapshot (which
  // carries the nodes' and HPAs' gpuscale.io/ state) is the pass's only copy.
  PassResult passFromCaches(TimePoint now);
  std::string lastPlanJson() const;

 private:
  void loop(std::stop_token stop);
  // Watches a collection the cluster may not serve (optional_informer.h): its objects, read as
  // `kind`, join each pass while it is served; while it is not, passes run without them.
  void watchOptional(std::string kind, kube::InformerOptions informer,
                     kube::InformerHandler handler);
  PassResult passOver(const std::vector<partition::KubeItem>& items, TimePoint now);
  void updateHpaStatus(const std::vector<partition::WorkloadDemand>& workloads,
                       const partition::ClusterSnapshot& snapshot, TimePoint now);
  // Logs once (and counts) each HPA whose policy annotation is ignored (policy.h: PolicyMatch).
  // Events for plan demands with an explanation: CeilingAnticipated (what was predicted) and
  // CapacityShared (how contended capacity was divided), each when its explanation changes.
  void recordExplanations(const partition::Plan& plan);
  void checkPolicyScope(const partition::ClusterSnapshot& snapshot,
                        const partition::PolicySet& policies);
  // Each object newly skipped because it does not read: logged, counted, and a Warning Event
  // (ObjectSkipped) on it, once until it reads again or changes.
  void reportSkipped(const std::vector<partition::SkippedObject>& skipped);
  // Drops state of HPAs that are gone, were recreated or are no longer managed.
  void pruneState(const partition::ClusterSnapshot& snapshot, const partition::PolicySet& policies);

  std::shared_ptr<kube::KubeClient> client_;
  std::shared_ptr<Actuator> actuator_;
  std::shared_ptr<PolicySource> policies_;
  std::shared_ptr<EventRecorder> events_;
  std::shared_ptr<ReconcilerMetrics> metrics_;
  ControllerOptions options_;
  std::shared_ptr<GpuPodMapping> gpuPods_;  // null: the node-level rule
  std::shared_ptr<RetriedWrites> retried_;  // null: retried writes are not reported
  DegradedLog degraded_;
  // "<namespace>/<name>=<policy>" of HPAs whose policy annotation is ignored (logged once each).
  std::set<std::string> ignoredAnnotations_;
  // The objects skipped in the last pass, with their reason (reported once each); loop thread.
  std::set<std::string> skipped_;
  // "<namespace>/<name>" -> the explanation last recorded as an Event, for the HPAs of the last
  // plan with explanations; loop thread only.
  std::map<std::string, std::string> explained_;
  std::unique_ptr<HpaStateStore> store_;
  HpaHistory history_;  // anticipation's observations, loop thread only
  // How long each lever took per node (start to allocatable), anticipation's lead time; loop
  // thread only, in memory (starts empty after a restart: the policy's leadTime applies).
  partition::MeasuredLeadTimes leadTimes_;
  uint64_t seenReloads_ = 0;  // policy reload attempts already counted in /metrics
  std::function<bool()> isLeader_;
  // The Pod informer's typed records (a pass reads these, not its store); declared before the
  // informers, whose threads call into it, so it outlives them.
  PodCache pods_;
  // Nodes, HPAs, Deployments and StatefulSets read once per change (read_cache.h), by kind.
  std::map<std::string, std::unique_ptr<ReadCache<partition::ObjectRecord>>, std::less<>> records_;
  std::vector<std::pair<std::string, std::unique_ptr<kube::Informer>>> informers_;  // kind
  std::vector<std::unique_ptr<OptionalInformer>> optional_;
  // Workloads of other kinds HPAs scale through /scale, and their Scales; loop thread.
  std::unique_ptr<ScaleTargetWatch> scaleTargets_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  bool dirty_ = true;
  std::string lastPlanJson_;
  std::jthread loop_;
};

}  // namespace gpuscale::reconciler
