// The one reader of Kubernetes objects: every Node, Pod, HPA, workload (and its /scale), KEDA
// ScaledObject, ConfigMap and Lease the reconciler looks at (through informer
// caches, a dump, or a fresh GET right before a write) becomes a typed value here, and nowhere
// else. The snapshot (snapshot.h) is built from these; the actuator's re-reads and the reconciler's
// state store, leader election and optimistic writes read through them too.
//
// The readers are no stricter than kube-apiserver's validation: what the API accepts is
// understood (absent optional fields, empty or partial status, int32 limits, any scale target
// kind, every metric target permutation validation lets through; see readHpa). A field of the
// wrong JSON type (a hand-written dump, never an API server) or a value beyond what the planner
// models (an extended-resource quantity beyond int64) is an error naming the field: callers skip
// such an object with that reason (snapshot.h: SkippedObject) instead of failing.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

// metadata, as every object has it.
struct ObjectMeta {
  std::string ns, name, uid, resourceVersion;
  Labels labels, annotations;
  bool deleting = false;                               // deletionTimestamp set
  std::optional<TimePoint> createdAt;                  // creationTimestamp, when it parses
  std::string label(std::string_view key) const;       // "" when absent
  std::string annotation(std::string_view key) const;  // "" when absent
};

struct Taint {
  std::string key, value, effect, timeAdded;
  friend bool operator==(const Taint&, const Taint&) = default;
};

// A Node's own fields (the GPU view built from them and the GPU Operator's ConfigMaps is
// NodeState, snapshot.h).
struct NodeObject {
  ObjectMeta meta;
  bool unschedulable = false;
  std::vector<Taint> taints;
  // status.allocatable of nvidia.com/* resources, rounded up to whole units (a quantity such as
  // "14" or "14000m"; extended resources are whole numbers).
  ResourceCounts allocatable;
};

struct ConfigMapObject {
  ObjectMeta meta;
  std::map<std::string, std::string> data;
  std::string value(std::string_view key) const;  // data[key], or ""
};

// A coordination.k8s.io/v1 Lease's spec.
struct LeaseObject {
  ObjectMeta meta;
  std::string holderIdentity;
  std::string renewTime;  // as written (MicroTime); compared, not parsed
  std::optional<int> leaseDurationSeconds;
  int leaseTransitions = 0;
};

// A KEDA ScaledObject (keda.sh/v1alpha1): what decides an HPA's ceiling when the ScaledObject owns
// that HPA (snapshot.h: CeilingHolder).
struct ScaledObjectObject {
  ObjectMeta meta;
  int minReplicaCount = 0;    // spec.minReplicaCount (KEDA's HPA gets at least 1)
  int maxReplicaCount = 100;  // spec.maxReplicaCount, KEDA's default when unset
  std::string hpaName;        // status.hpaName: the HPA KEDA made for it ("" before the first)
};

// An autoscaling/v1 Scale, the answer of any workload's /scale subresource. Its metadata is the
// workload's (name, namespace, uid).
struct ScaleObject {
  ObjectMeta meta;
  int specReplicas = 0;
  int statusReplicas = 0;
  std::string selector;  // status.selector, label-selector text ("" when the kind exposes none)
};

// Errors are Status::invalid naming the field ("metadata.labels.app must be a string").
core::Result<ObjectMeta> readMeta(const nlohmann::json& object);
core::Result<NodeObject> readNode(const nlohmann::json& object);
// A Pod: where it runs, its phase and conditions, its GPU requests as the scheduler counts them
// (containers, sidecars, the peak of the init containers), DRA claims and what makes it a GPU
// user (PodState::gpuUse).
core::Result<PodState> readPod(const nlohmann::json& object);
// An autoscaling/v2 HorizontalPodAutoscaler. Metric targets are read as the HPA controller reads
// them, not by their `type` (validation does not check that `type` agrees with the field set):
// Resource/ContainerResource use averageValue when set, else averageUtilization; Pods uses
// averageValue; External uses averageValue when set, else value; Object uses value when the type
// is Value and averageValue when it is AverageValue, and nothing otherwise (the controller then
// fails that metric too). A metric without a usable target proposes nothing (HpaMetric::target 0).
// Its controller owner reference (metadata.ownerReferences, controller: true) is kept; a
// ScaledObject that owns it becomes its CeilingHolder in the snapshot.
core::Result<HpaState> readHpa(const nlohmann::json& object);
// A Deployment, StatefulSet or ReplicaSet (`kind`): replicas, selector, its pods' GPU requests,
// nodeSelector.
core::Result<ScaleTarget> readWorkload(const nlohmann::json& object, std::string_view kind);
// Any other workload an HPA scales through its /scale subresource, `kind` as the HPA names it, with
// that subresource's Scale when it was read (null: not read):
//   - replicas from the Scale (else spec.replicas); pods from the Scale's status.selector, parsed
//     as kube-apiserver's label-selector text (set-based terms included); a LeaderWorkerSet's pods
//     are every pod labelled leaderworkerset.sigs.k8s.io/name=<name> (its /scale selects only the
//     group leaders), so it needs no Scale;
//   - pods per replica: a LeaderWorkerSet's spec.leaderWorkerTemplate.size (default 1), the
//     annotation gpuscale.io/pods-per-replica on any other kind (a decimal integer >= 1,
//     default 1);
//   - the pod template: spec.template (Deployment-like kinds), a LeaderWorkerSet's worker template
//     with, per resource, the larger GPU request of its leader template (every pod of a group is
//     counted as asking the larger one: never too little), otherwise none (templateFromPods).
// Errors: fields of the wrong type, a selector that does not parse, an annotation that is no
// integer >= 1 (out of range beyond int32), and, for kinds other than LeaderWorkerSet, no Scale
// (Status::invalid with reason kNoScaleReason).
inline constexpr std::string_view kNoScaleReason = "NoScale";
core::Result<ScaleTarget> readScalableWorkload(const nlohmann::json& object, std::string_view kind,
                                               const ScaleObject* scale);
// The GPU requests and nodeSelector of a pod spec (a workload without a template takes them, and
// the pod's GPU memory need, from one of its pods).
core::Result<ScaleTarget> readPodTemplate(const nlohmann::json& podSpec);
core::Result<ScaleObject> readScale(const nlohmann::json& object);
core::Result<ScaledObjectObject> readScaledObject(const nlohmann::json& object);
core::Result<ConfigMapObject> readConfigMap(const nlohmann::json& object);
core::Result<LeaseObject> readLease(const nlohmann::json& object);

// The objects of a dump: a `kind: List` (or any object with `items`), an array of them, or objects
// (each with its own `kind`). Errors: something that is none of these (a number, an `items` that
// is not a list).
core::Result<std::vector<KubeItem>> collectKubeItems(const nlohmann::json& dump);
// Whatever of metadata.namespace, .name and .uid reads ("" for what does not): the identity of an
// object that does not read as a whole.
ObjectMeta identityOf(const nlohmann::json& object);
// The SkippedObject (snapshot.h) for an object of `kind` that did not read, `why` being the
// reader's error: its identity, the metric reason ("out_of_range", "no_scale", "unsupported" or
// "malformed") and the reader's message.
SkippedObject skippedObject(std::string_view kind, const nlohmann::json& object,
                            const core::Status& why);
// `object`'s own `kind`, or "" (informer caches do not keep it).
std::string kindOf(const nlohmann::json& object);

}  // namespace gpuscale::partition
