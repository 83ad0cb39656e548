// The one reader of Kubernetes objects: every Node, Pod, HPA, workload, ConfigMap, PriorityClass
// and Lease the reconciler looks at (through informer caches, a dump, or a fresh GET right before a
// write) becomes a typed value here, and nowhere else. The snapshot (snapshot.h) is built from
// these; the actuator's re-reads and the reconciler's state store, leader election and optimistic
// writes read through them too.
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

struct PriorityClassObject {
  ObjectMeta meta;
  int value = 0;
  bool globalDefault = false;
};

// A coordination.k8s.io/v1 Lease's spec.
struct LeaseObject {
  ObjectMeta meta;
  std::string holderIdentity;
  std::string renewTime;  // as written (MicroTime); compared, not parsed
  std::optional<int> leaseDurationSeconds;
  int leaseTransitions = 0;
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
core::Result<HpaState> readHpa(const nlohmann::json& object);
// A Deployment, StatefulSet or ReplicaSet (`kind`): replicas, selector, its pods' GPU requests,
// nodeSelector and priority class.
core::Result<ScaleTarget> readWorkload(const nlohmann::json& object, std::string_view kind);
core::Result<ConfigMapObject> readConfigMap(const nlohmann::json& object);
core::Result<PriorityClassObject> readPriorityClass(const nlohmann::json& object);
core::Result<LeaseObject> readLease(const nlohmann::json& object);

// The objects of a dump: a `kind: List` (or any object with `items`), an array of them, or objects
// (each with its own `kind`). Errors: something that is none of these (a number, an `items` that
// is not a list).
core::Result<std::vector<KubeItem>> collectKubeItems(const nlohmann::json& dump);
// Whatever of metadata.namespace, .name and .uid reads ("" for what does not): the identity of an
// object that does not read as a whole.
ObjectMeta identityOf(const nlohmann::json& object);
// `object`'s own `kind`, or "" (informer caches do not keep it).
std::string kindOf(const nlohmann::json& object);

}  // namespace gpuscale::partition
