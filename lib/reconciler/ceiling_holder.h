// Where the actuator writes a demand's ceiling (private to lib/reconciler), decided by the object
// that holds it, never by the demand's name:
//   - an HPA: its own spec.maxReplicas;
//   - an HPA a KEDA ScaledObject owns: that ScaledObject's spec.maxReplicaCount. KEDA's operator
//     rewrites its HPA's maxReplicas from the ScaledObject on every reconcile (it watches the
//     HPA, so at once), so a raise written to the HPA would be undone and the two controllers
//     would fight; the ScaledObject is the one place the ceiling holds;
//   - a GPUCapacityRequest (partition/capacity_request.h): its status.grantedReplicas, written
//     through the status subresource (a tenant who may edit the request's spec cannot grant
//     itself partitions, and the reconciler needs no write on the spec).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/reconciler/event_recorder.h"
#include "gpuscale/reconciler/intent.h"

namespace gpuscale::reconciler {

enum class CeilingHolder { kHpa, kScaledObject, kCapacityRequest };

struct CeilingRef {
  kube::ResourceRef ref;  // the object written (the status subresource for a request)
  std::string uid;        // the uid it must have (the HPA's, or the one its owner reference names)
  CeilingHolder holder = CeilingHolder::kHpa;
  // How Events and the status name the field (HpaState::ceilingField).
  std::string field;

  const std::string& describe() const { return field; }
  // Whether the status annotation (gpuscale.io/status) goes in the same patch as the ceiling: it
  // lives on the object that holds the ceiling. On a ScaledObject, not on KEDA's HPA: KEDA sets
  // its HPA's annotations to the ScaledObject's on every reconcile (removing all of them when the
  // ScaledObject has none), so an annotation written to that HPA is undone and rewritten each
  // pass; KEDA copies the ScaledObject's to the HPA instead. A request has no annotation: its
  // status conditions say the rest (request_status.h).
  bool annotatesInPatch() const { return holder != CeilingHolder::kCapacityRequest; }
  // The ceiling in `object`, a fresh read of `ref`; nullopt when the object is not the one meant
  // (another uid: recreated meanwhile). Errors: Status::invalid when it does not read.
  core::Result<std::optional<int>> read(const kube::Object& object) const;
  // The merge patch that sets the ceiling to `value`.
  nlohmann::json patch(int value) const;
};

// {"annotations": {"gpuscale.io/status": ...}}: the `metadata` of a patch that writes `status` on
// the object holding a ceiling (CeilingRef::annotatesInPatch).
nlohmann::json statusAnnotationMetadata(const HpaStatus& status);

// The holder of `hpa`'s ceiling: a request's status for the HpaState of a capacity request, else
// from the HPA's controller owner reference.
CeilingRef ceilingRefOf(const partition::HpaState& hpa);

// A fresh read of the object a demand named `name` stands for: the HPA, or for
// partition::capacityRequestHpaName(request) the GPUCapacityRequest, read as its HpaState.
// Errors: the GET's, or Status::invalid when the object does not read.
core::Result<partition::HpaState> getDemandOwner(kube::KubeClient& client, const std::string& ns,
                                                 const std::string& name);

// The status subresource of GPUCapacityRequest ns/name.
kube::ResourceRef capacityRequestStatusRef(const std::string& ns, const std::string& name);

// The object Events about demand `name` go to: the HPA, or the GPUCapacityRequest.
EventTarget demandEventTarget(const std::string& ns, const std::string& name, std::string uid = {});

}  // namespace gpuscale::reconciler
