// Dynamic Resource Allocation objects (resource.k8s.io/v1) as the planner reads them: the
// ResourceSlices a DRA driver publishes for a node (devices, their attributes, capacities and the
// counters partitionable devices consume), DeviceClasses (their CEL selectors), the
// ResourceClaimTemplates a workload's pods claim devices through, and ResourceClaims (what the
// scheduler allocated, and to whom). Part of the one reader (kube_objects.h): nothing else reads
// these objects' JSON.
//
// Shapes: v1 (`exactly` / `firstAvailable` requests) and the inline requests of v1beta1 (a
// hand-written dump) read alike. Only what the planner uses is kept; fields it does not model
// (request tolerations, claim config) are not read, attributes of the list types
// (DRAListTypeAttributes) are left out (a selector that reads one does not match), and the things
// that change how a claim allocates but that the planner does not model are recorded as flags so
// the claim can be skipped with a reason (DraDeviceRequest, DraClaimSpec). A field of the wrong
// JSON type is an error naming it, as for every reader of kube_objects.h. A gpu.nvidia.com slice
// that is not local to one node (nodeSelector, allNodes, perDeviceNodeSelection: the driver never
// publishes one) is an error with reason kDraUnsupportedReason: the snapshot skips it as
// "unsupported". Counter values beyond 2^50 are out of range, as are claim counts beyond 2^16.
//
// Thread safety: pure functions and values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/kube_objects.h"

namespace gpuscale::partition {

// NVIDIA's GPU DRA driver: the only driver whose devices the planner counts as GPUs and MIG
// devices.
inline constexpr std::string_view kNvidiaGpuDriver = "gpu.nvidia.com";

// The Status reason of an object the API accepts but the planner does not model (a gpu.nvidia.com
// ResourceSlice that is not local to one node), and of a CEL selector outside the subset
// (dra_cel.h): the snapshot skips such an object with reason "unsupported".
inline constexpr std::string_view kDraUnsupportedReason = "Unsupported";

// One device attribute: exactly one of the four types the API allows.
struct DraValue {
  enum class Type { kString, kInt, kBool, kVersion };
  Type type = Type::kString;
  std::string text;         // kString, kVersion (semantic version text, "8.0.0")
  std::int64_t number = 0;  // kInt
  bool flag = false;        // kBool
  friend bool operator==(const DraValue&, const DraValue&) = default;
};

// What a device takes from one of its pool's counter sets when it is allocated.
struct DraCounterUse {
  std::string counterSet;
  std::map<std::string, std::int64_t> counters;
};

struct DraDevice {
  std::string name;
  // By qualified name: a name without a domain gets the slice's driver as its domain
  // ("gpu.nvidia.com/profile"), as CEL sees it.
  std::map<std::string, DraValue, std::less<>> attributes;
  // Capacities by qualified name, as quantity text ("4864Mi", "14").
  std::map<std::string, std::string, std::less<>> capacity;
  std::vector<DraCounterUse> consumesCounters;
  bool allowMultipleAllocations = false;
  // A NoSchedule or NoExecute taint: claim tolerations are not modelled, so no claim is counted
  // on the device (it publishes no capacity).
  bool tainted = false;
  // The attribute `name` of the driver's domain, or nullptr.
  const DraValue* attribute(std::string_view driver, std::string_view name) const;
};

struct DraCounterSet {
  std::string name;
  std::map<std::string, std::int64_t> counters;
};

struct ResourceSliceObject {
  ObjectMeta meta;
  std::string driver, pool;
  std::string nodeName;  // "" for slices that are not local to one node
  std::int64_t generation = 0;
  std::int64_t sliceCount = 1;  // slices in the pool at this generation
  std::vector<DraDevice> devices;
  std::vector<DraCounterSet> sharedCounters;
};

struct DeviceClassObject {
  ObjectMeta meta;
  std::vector<std::string> selectors;  // CEL expressions; every one must match
  std::string extendedResourceName;
};

// One way a request can be satisfied: an `exactly` request, or one subrequest of firstAvailable.
struct DraDeviceRequest {
  std::string name, deviceClassName;
  std::vector<std::string> selectors;         // CEL expressions; every one must match
  std::string allocationMode = "ExactCount";  // or All
  std::int64_t count = 1;
  bool adminAccess = false;       // needs no free device: not counted
  bool consumesCapacity = false;  // capacity.requests (consumable capacity): not modelled
};

struct DraClaimRequest {
  std::string name;
  // One for `exactly`; the subrequests, in order, for firstAvailable.
  std::vector<DraDeviceRequest> alternatives;
  bool firstAvailable = false;
};

struct DraClaimSpec {
  std::vector<DraClaimRequest> requests;
  bool constraints = false;  // matchAttribute / distinctAttribute constraints: not modelled
};

struct ResourceClaimTemplateObject {
  ObjectMeta meta;
  DraClaimSpec spec;
};

// One allocated device (status.allocation.devices.results).
struct DraAllocatedDevice {
  std::string request, driver, pool, device;
};

struct ResourceClaimObject {
  ObjectMeta meta;
  DraClaimSpec spec;
  std::vector<DraAllocatedDevice> allocated;  // empty: not allocated
  std::vector<std::string> reservedForPods;   // names of the pods in status.reservedFor
};

core::Result<ResourceSliceObject> readResourceSlice(const nlohmann::json& object);
core::Result<DeviceClassObject> readDeviceClass(const nlohmann::json& object);
core::Result<ResourceClaimTemplateObject> readResourceClaimTemplate(const nlohmann::json& object);
core::Result<ResourceClaimObject> readResourceClaim(const nlohmann::json& object);

}  // namespace gpuscale::partition
