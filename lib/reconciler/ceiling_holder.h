// Where the actuator writes an HPA's ceiling (private to lib/reconciler): the HPA's own
// spec.maxReplicas, or, for an HPA a KEDA ScaledObject owns, that ScaledObject's
// spec.maxReplicaCount. KEDA's operator rewrites its HPA's maxReplicas from the ScaledObject on
// every reconcile (it watches the HPA, so at once), so a raise written to the HPA would be undone
// and the two controllers would fight; the ScaledObject is the one place the ceiling holds.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::reconciler {

struct CeilingRef {
  kube::ResourceRef ref;  // the object written
  std::string uid;        // the uid it must have (the HPA's, or the one its owner reference names)
  bool scaledObject = false;
  // How Events and the status name the field (HpaState::ceilingField).
  std::string field;

  const std::string& describe() const { return field; }
  // The ceiling in `object`, a fresh read of `ref`; nullopt when the object is not the one meant
  // (another uid: recreated meanwhile). Errors: Status::invalid when it does not read.
  core::Result<std::optional<int>> read(const kube::Object& object) const;
  // The merge patch that sets the ceiling to `value`.
  nlohmann::json patch(int value) const;
};

// The holder of `hpa`'s ceiling, from its controller owner reference.
CeilingRef ceilingRefOf(const partition::HpaState& hpa);

}  // namespace gpuscale::reconciler
