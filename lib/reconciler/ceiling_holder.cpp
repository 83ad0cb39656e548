#include "ceiling_holder.h"

#include "actuator_internal.h"
#include "gpuscale/partition/kube_objects.h"

namespace gpuscale::reconciler {

core::Result<std::optional<int>> CeilingRef::read(const kube::Object& object) const {
  if (scaledObject) {
    auto so = partition::readScaledObject(object);
    if (!so) return so.status();
    if (!uid.empty() && so->meta.uid != uid) return std::optional<int>{};
    return std::optional<int>(so->maxReplicaCount);
  }
  auto hpa = partition::readHpa(object);
  if (!hpa) return hpa.status();
  if (hpa->uid != uid) return std::optional<int>{};
  return std::optional<int>(hpa->maxReplicas);
}

nlohmann::json CeilingRef::patch(int value) const {
  return {{"spec", {{scaledObject ? "maxReplicaCount" : "maxReplicas", value}}}};
}

CeilingRef ceilingRefOf(const partition::HpaState& hpa) {
  if (hpa.ownedByScaledObject()) {
    return {kube::ResourceRef::collection("keda.sh", "v1alpha1", "scaledobjects", hpa.ns)
                .named(hpa.controller->name),
            hpa.controller->uid, true, hpa.ceilingField()};
  }
  return {actuator_detail::hpaRef(hpa.ns, hpa.name), hpa.uid, false, hpa.ceilingField()};
}

}  // namespace gpuscale::reconciler
