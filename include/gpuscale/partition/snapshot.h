// The cluster as the planner sees it: GPU nodes with their MIG layout, time-slicing and
// allocatable, pods with their GPU requests and scheduling state, HPAs with spec, status and
// conditions, and their scale targets. Built from Kubernetes JSON objects (a `kubectl get
// nodes,pods,hpa,deployments,configmaps -A -o json` dump or informer caches); no I/O here.
//
// A node's per-GPU MIG layout comes from its `nvidia.com/mig.config` label resolved in the
// mig-parted ConfigMaps (the per-node `<node>-mig-config` first, then custom ones,
// `default-mig-parted-config` last); when no ConfigMap resolves it, mixed-strategy GFD labels
// `nvidia.com/mig-<profile>.count` are split evenly across GPUs if that gives a valid geometry.
// Sharing replicas (time-slicing or MPS) come from the `nvidia.com/device-plugin.config` label
// resolved in any ConfigMap holding that key, else from the GFD `*.replicas` labels.
//
// Busy GPUs: the snapshot has no pod-to-GPU mapping, so every GPU of a node counts as busy when any
// pod that requests an `nvidia.com/` resource (in a container, a sidecar or an init container) or
// has Dynamic Resource Allocation claims is bound there and not finished. A caller that knows
// more (the reconciler's dcgm-exporter mapping) may clear `GpuState::busy` on GPUs it knows idle;
// the planner then reshapes those GPUs of a mixed-strategy node while its other GPUs hold pods,
// never changing a GPU's MIG mode (see planner.h).
//
// Thread safety: an immutable value once built.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/result.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/gpu_memory_need.h"
#include "gpuscale/partition/lead_time.h"
#include "gpuscale/partition/mig_catalog.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/partition/pod_list.h"
#include "gpuscale/partition/workload_priority.h"

namespace gpuscale::partition {

using Labels = std::map<std::string, std::string>;
using ResourceCounts = std::map<std::string, std::int64_t, std::less<>>;
using TimePoint = std::chrono::system_clock::time_point;

// Device-plugin config keys gpuscale writes start with this; scale-in only lowers time-slicing it
// set.
inline constexpr std::string_view kOwnedConfigPrefix = "gpuscale-";

// How a node offers its GPUs to pods: the NVIDIA device plugin (node allocatable), or NVIDIA's GPU
// DRA driver (ResourceSlices the scheduler allocates claims from) with MIG devices made by
// mig-manager (static) or carved by the driver at allocation (partitionable devices).
enum class CapacityModel { kDevicePlugin, kDraStatic, kDraPartitionable };
// "device plugin" | "DRA static" | "DRA partitionable"
std::string_view capacityModelName(CapacityModel model);

struct DraPool;          // dra_capacity.h
struct CapacityRequest;  // capacity_request.h

struct GpuState {
  int index = 0;
  MigGpuSetting setting;
  bool busy = false;
};

struct NodeState {
  std::string name;
  Labels labels;
  bool schedulable = true;
  std::string product;              // nvidia.com/gpu.product
  const GpuModel* model = nullptr;  // nullptr: not MIG-capable or not recognised
  MigStrategy migStrategy = MigStrategy::kNone;
  std::string migConfig;                                 // nvidia.com/mig.config
  std::string migConfigState;                            // nvidia.com/mig.config.state
  bool geometryKnown = false;                            // gpus[] carry each GPU's MIG setting
  std::vector<GpuState> gpus;                            // one per physical GPU when known
  std::string devicePluginConfigName;                    // nvidia.com/device-plugin.config
  std::optional<DevicePluginConfig> devicePluginConfig;  // when the label resolves
  std::optional<double> gpuMemoryGiB;                    // whole-GPU memory (nvidia.com/gpu.memory)
  ResourceCounts allocatable;                            // nvidia.com/* only
  ResourceCounts devices;  // physical devices behind each advertised resource (before time-slicing)
  ResourceCounts used;     // requested by bound, unfinished pods
  // The namespaces of those pods, per base resource (unshared name): who a sharing raise would put
  // next to whom (gpu_tenancy.h).
  std::map<std::string, std::set<std::string>, std::less<>> gpuTenants;
  // Sharing replicas > 1 per base resource, from the device-plugin config or else the GFD labels.
  std::map<std::string, int, std::less<>> sharedReplicas;
  // How those replicas share: MPS when the config has `sharing.mps` (or, without a config, GFD
  // labels the node `nvidia.com/gpu.sharing-strategy=mps`), else time-slicing.
  SharingMode sharingMode = SharingMode::kTimeSlicing;
  bool hasGpuPods = false;
  bool gpuMapped = false;  // GpuState::busy comes from a per-GPU mapping, not the node-level rule
  bool inTransition =
      false;               // a MIG change is pending/failed or operands are paused: leave it alone
  bool hasIntent = false;  // a gpuscale.io/intent annotation: an operation runs
  bool reshapeTainted = false;  // carries the gpuscale.io/reshape taint
  // The last gpuscale operation's end, "<result>: <message>" of gpuscale.io/outcome when it reads
  // (why a node backs off, for `explain`); "" otherwise.
  std::string lastOutcome;
  // The allocatable that operation waits for (the intent's `expect`, its time-slicing follow-up's
  // when it has one): the partitions it will create. Empty without an intent or when unreadable.
  ResourceCounts expected;
  std::optional<TimePoint> backoffUntil;  // gpuscale.io/backoff-until, when it parses
  // What each GPU returns to when a burst's reshape is given back: the `before` config of a live
  // gpuscale.io/mig-restore record (partition/mig_restore.h), when it resolves for every GPU.
  std::optional<std::vector<MigGpuSetting>> restoreGpus;
  // Set by a caller with a per-GPU mapping (never from the API objects; lever_choice.h):
  // the mapping is incomplete only because pods started moments ago are not in the metrics yet,
  // while some GPU looks idle. The GPUs stay busy; the planner waits rather than choose a lever.
  bool gpuMappingSettling = false;
  // Mean utilisation (0..1) of the physical devices that hold pods, per base resource
  // ("nvidia.com/mig-1g.5gb", "nvidia.com/gpu"), as the caller's metrics show it; empty: unknown.
  std::map<std::string, double, std::less<>> utilization;
  // DRA nodes (dra_capacity.h): `allocatable` and `devices` hold the devices the driver published
  // per kind (partitionable: those allocated plus those the free counters still allow), `used` the
  // devices claims hold; no time-slicing. `draPool` is the node's pool as the scheduler uses it.
  CapacityModel capacityModel = CapacityModel::kDevicePlugin;
  std::shared_ptr<const DraPool> draPool;
  bool dra() const { return capacityModel != CapacityModel::kDevicePlugin; }

  // Time-slicing replicas of `resource` (".shared" names map to their base resource).
  int replicasFor(std::string_view resource) const;
  // Units of `resource` the node offers: physical devices x time-slicing replicas.
  std::int64_t capacityFor(std::string_view resource) const;
  // Whether gpuscale wrote the node's device-plugin config.
  bool ownsDevicePluginConfig() const;
  // Whether some mig-manager reports the node's MIG state (nvidia.com/mig.config.state set and not
  // empty). Without one nothing applies a MIG config: the node is not MIG-managed, and the planner
  // never reshapes it.
  bool migManaged() const { return !migConfigState.empty(); }
};

// A pod's (or pod template's) spec.resourceClaims entry: a claim made per pod from a template, or a
// claim shared by name.
struct PodClaimRef {
  std::string name;          // the pod's name for it
  std::string templateName;  // resourceClaimTemplateName
  // resourceClaimName, or for a template the claim made for this pod
  // (status.resourceClaimStatuses); "" until it is made.
  std::string claimName;
  friend bool operator==(const PodClaimRef&, const PodClaimRef&) = default;
};

struct PodState {
  std::string ns, name;
  Labels labels;
  std::string nodeName;
  std::string phase;
  bool ready = false;
  bool terminating = false;
  // nvidia.com/* per pod, as the scheduler counts them: containers, sidecars and the peak of the
  // init containers.
  ResourceCounts gpuRequests;
  bool resourceClaims = false;  // has DRA claims: may hold any device of its node
  // What makes the pod a GPU user, for messages ("init container \"warmup\" requests
  // nvidia.com/gpu"), or "": an nvidia.com/ request in a container, an init container, a sidecar
  // or pod-level resources, or DRA claims.
  std::string gpuUse;
  // Pending+Unschedulable with "Insufficient nvidia.com/..."; for a pod whose claims could not be
  // allocated, its workload's resource (dra_capacity.h).
  std::string insufficientResource;
  std::vector<PodClaimRef> claims;
  // Pending+Unschedulable because the scheduler "cannot allocate all claims".
  bool claimsUnallocatable = false;
  bool nominated = false;      // status.nominatedNodeName set (preempting)
  bool unschedulable = false;  // Pending, PodScheduled False/Unschedulable (any message)
  // status.startTime (the kubelet took the pod), else metadata.creationTimestamp, when it parses.
  std::optional<TimePoint> startedAt;
  // The GPU memory the pod takes per device (gpu_memory_need.h): what sharing its device must leave
  // it.
  GpuMemoryNeed gpuMemory;
  // spec.priority: what the Priority admission plugin resolved from the pod's PriorityClass (it
  // rejects a pod that sets another value); unset when the plugin is off.
  std::optional<int> priority;
  bool active() const { return phase != "Succeeded" && phase != "Failed"; }
  // Holds, or may hold, GPUs of its node (makes them busy for the planner) while active.
  bool usesGpu() const { return !gpuUse.empty(); }
};

// The workload an HPA scales: a Deployment, StatefulSet or ReplicaSet (from its own fields), or
// any other kind with a /scale subresource (kube_objects.h: readScalableWorkload).
struct ScaleTarget {
  std::string kind, ns, name;
  std::string uid;
  int specReplicas = 0;
  Labels selector;  // spec.selector.matchLabels, or the equality terms of a /scale selector
  // The set-based terms of a /scale selector ("k in (a,b)", "!k", ...); all must match too.
  std::vector<core::Requirement> selectorRequirements;
  // A replica is a group of this many pods, and the group runs only when every one of them has
  // its partitions: LeaderWorkerSet's spec.leaderWorkerTemplate.size, the annotation
  // gpuscale.io/pods-per-replica on other scalable kinds; 1 for Deployments, StatefulSets and
  // ReplicaSets.
  int podsPerReplica = 1;
  ResourceCounts gpuRequests;  // per pod
  Labels nodeSelector;         // of the pod template
  GpuMemoryNeed gpuMemory;     // of the pod template (gpu_memory_need.h)
  // No pod template the reader knows: the three fields above come from the workload's first pod
  // (namespace/name order) when the snapshot is built.
  bool templateFromPods = false;
  // The pod template's resourceClaims. When it names ResourceClaimTemplates the planner can count
  // (dra_capacity.h), gpuRequests holds the devices one pod's claims take, by kind; otherwise
  // draProblem says why not.
  std::vector<PodClaimRef> claims;
  std::string draProblem;
  // gpuRequests come from the pods' claims: the pods run only on nodes that follow a DRA model
  // (NodeState::dra()), and pods of other workloads never on those.
  bool draClaims = false;
  bool selects(const PodState& pod) const;
};

// An ownerReferences entry of an object.
struct OwnerReference {
  std::string apiVersion, kind, name, uid;
};

// The object that sets an HPA's maxReplicas when that is not the HPA itself: the KEDA ScaledObject
// that owns the HPA (its controller owner reference, and status.hpaName naming the HPA). KEDA
// rewrites the HPA's maxReplicas from the ScaledObject's spec.maxReplicaCount on every reconcile,
// so the ceiling is raised and lowered there.
struct CeilingHolder {
  std::string kind, apiVersion, name, uid;
  std::string field;    // the field that holds the ceiling: "spec.maxReplicaCount"
  int maxReplicas = 0;  // its value (KEDA's default, 100, when unset)
  std::string status;   // its gpuscale.io/status annotation (informational, never decides)
  // "ScaledObject worker": how Events, `explain` and the status name it.
  std::string describe() const { return kind + " " + name; }
};

// One metric of an HPA: its target from spec.metrics and, when reported, its current value.
struct HpaMetric {
  std::string type;        // Pods | Resource | ContainerResource | Object | External
  std::string key;         // metric or resource name (plus container / described object)
  std::string targetType;  // Utilization | AverageValue | Value
  double target = 0;
  std::optional<double> current;
};

struct HpaCondition {
  std::string type, status, reason;
};

// One look at an HPA, kept by the reconciler between passes for anticipation
// (ceiling_forecast.h).
struct HpaObservation {
  TimePoint at;
  int currentReplicas = 0;
  int desiredReplicas = 0;
  int wanted = 0;  // the HPA formula, unclamped
};

struct HpaState {
  std::string ns, name;
  std::string uid;  // metadata.uid: state recorded for an HPA is not inherited by a recreated one
  Labels labels;    // a policy's hpaSelector matches these
  // Tenant-writable: only the policy annotation (filtered by the policies' scope) and the
  // informational status are read from here, never state that drives a decision.
  Labels annotations;
  std::string targetApiVersion, targetKind, targetName;
  int minReplicas = 1, maxReplicas = 1;
  // metadata.ownerReferences: the entry with controller: true, when there is one.
  std::optional<OwnerReference> controller;
  // Set when another object holds this HPA's ceiling (a KEDA ScaledObject that owns it and is in
  // the snapshot): gpuscale then changes that object, never the HPA's maxReplicas.
  std::optional<CeilingHolder> ceilingHolder;
  // Set when this is no HPA but a GPUCapacityRequest (capacity_request.h): the name is
  // capacityRequestHpaName(request), maxReplicas is status.grantedReplicas, and the planner wants
  // spec.replicas.
  std::shared_ptr<const CapacityRequest> capacityRequest;
  // Whether a KEDA ScaledObject is the HPA's controller (whether or not the snapshot has it).
  bool ownedByScaledObject() const;
  // Where the ceiling is written, as Events and `explain` name it: "maxReplicas",
  // "ScaledObject NAME spec.maxReplicaCount" when a KEDA ScaledObject owns the HPA, or
  // "GPUCapacityRequest NAME status.grantedReplicas" for a capacity request.
  std::string ceilingField() const;
  int currentReplicas = 0, desiredReplicas = 0;
  std::vector<HpaCondition> conditions;
  std::vector<HpaMetric> metrics;
  std::optional<double> scaleUpTolerance;  // spec.behavior.scaleUp.tolerance
  // From the reconciler's own state store (reconciler/hpa_state_store.h), never from the HPA:
  // when gpuscale last changed maxReplicas (cooldowns), and maxReplicas before its first raise
  // (what giving isolation back returns to; unset: nothing to give back).
  std::optional<TimePoint> lastChange;
  std::optional<int> originalMaxReplicas;
  // Also from the state store: the maxReplicas a change in flight will raise the HPA to (its
  // intent's `to`), while its node operations run. Contention reserves that capacity for it.
  std::optional<int> promisedMaxReplicas;
  // From the reconciler's memory: earlier observations of this HPA, older first (anticipation).
  std::vector<HpaObservation> history;
  bool hasCondition(std::string_view type, std::string_view status,
                    std::string_view reason = {}) const;
  // annotations[key], or "".
  std::string annotation(std::string_view key) const;
};

// An object of a kind the snapshot reads that did not read (kube_objects.h): the pass plans as if
// it were absent, and says so (a counter, an Event on the object, `explain`).
struct SkippedObject {
  std::string kind, ns, name, uid;  // what of its identity reads ("" otherwise)
  // "malformed" | "out_of_range" | "no_scale" (a scalable workload without its /scale: the pods
  // cannot be found) | "unsupported" (valid for the API, not modelled: dra_objects.h) (a metric
  // label)
  std::string reason;
  std::string message;  // which field, and what it must be
  friend bool operator==(const SkippedObject&, const SkippedObject&) = default;
};

struct ClusterSnapshot {
  std::vector<NodeState> nodes;  // sorted by name
  PodList pods;                  // sorted by namespace/name (shared with a pod cache: pod_list.h)
  std::vector<HpaState> hpas;    // sorted by namespace/name
  std::vector<ScaleTarget> targets;    // sorted by namespace/kind/name
  std::vector<SkippedObject> skipped;  // in input order
  // Not from the API: what the reconciler measured its levers take per node (lead_time.h), set
  // by the caller like HpaState::history; empty in a dump.
  MeasuredLeadTimes measuredLeadTimes;

  const NodeState* node(std::string_view name) const;
  std::optional<std::size_t> nodeIndex(std::string_view name) const;
  const ScaleTarget* target(std::string_view ns, std::string_view kind,
                            std::string_view name) const;
  const HpaState* hpa(std::string_view ns, std::string_view name) const;

  std::unordered_map<std::string, std::size_t> nodeIndex_;
};

// Builds the snapshot from a `kind: List` (or an array of Lists/objects, or an object with
// `items`). Kinds used: Node, Pod, HorizontalPodAutoscaler, Deployment, StatefulSet, ReplicaSet,
// ConfigMap, ScaledObject (the holders of KEDA-owned HPAs' ceilings), GPUCapacityRequest
// (capacity_request.h: each becomes an HpaState), Scale
// (autoscaling/v1, paired with its workload by uid), DRA's ResourceSlice, ResourceClaim,
// ResourceClaimTemplate and DeviceClass (dra_capacity.h), and objects of any other kind that an
// HPA scales (readScalableWorkload); others are ignored. An object of these kinds that does not
// read (a field of the wrong JSON type, a number beyond what the planner models) is skipped, with
// its reason, into ClusterSnapshot::skipped: no object stops a snapshot. Errors (Status::invalid)
// only for a dump that is no list of objects.
core::Result<ClusterSnapshot> buildSnapshot(const nlohmann::json& dump);

struct PodRecord;     // pod_record.h
struct ObjectRecord;  // object_record.h

// One input object of a snapshot, not copied: its kind ("" = read the object's own `kind`, as a
// dump has it; informer caches do not keep it) and the object, which must outlive the call. A Pod
// may come already read instead (`pod` set, `object` null: the reconciler's pod cache): the
// snapshot shares the record's PodState (pod_list.h) rather than copying it. A Node, HPA,
// Deployment, StatefulSet or ReplicaSet may come read as well (`record` set, `object` null, `kind`
// set: the reconciler's caches of those kinds). Objects given as JSON are read with readPodRecord
// and readObjectRecord, so either way gives the same snapshot.
struct KubeItem {
  std::string_view kind;
  const nlohmann::json* object = nullptr;
  std::shared_ptr<const PodRecord> pod = nullptr;
  std::shared_ptr<const ObjectRecord> record = nullptr;
};

// The same from objects held elsewhere (informer caches): the snapshot is the pass's only copy.
// Never an error (objects that do not read are skipped).
core::Result<ClusterSnapshot> buildSnapshot(const std::vector<KubeItem>& items);

}  // namespace gpuscale::partition
