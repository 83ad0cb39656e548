#include "ceiling_holder.h"

#include "actuator_internal.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/capacity_request.h"
#include "gpuscale/partition/kube_objects.h"

namespace gpuscale::reconciler {
namespace {

kube::ResourceRef requestRef(const std::string& ns, const std::string& name) {
  return kube::ResourceRef::collection(partition::kCapacityRequestGroup,
                                       partition::kCapacityRequestVersion,
                                       partition::kCapacityRequestResource, ns)
      .named(name);
}

}  // namespace

kube::ResourceRef capacityRequestStatusRef(const std::string& ns, const std::string& name) {
  auto ref = requestRef(ns, name);
  ref.subresource = "status";
  return ref;
}

core::Result<std::optional<int>> CeilingRef::read(const kube::Object& object) const {
  switch (holder) {
    case CeilingHolder::kScaledObject: {
      auto so = partition::readScaledObject(object);
      if (!so) return so.status();
      if (!uid.empty() && so->meta.uid != uid) return std::optional<int>{};
      return std::optional<int>(so->maxReplicaCount);
    }
    case CeilingHolder::kCapacityRequest: {
      auto request = partition::readCapacityRequest(object);
      if (!request) return request.status();
      if (request->meta.uid != uid) return std::optional<int>{};
      return std::optional<int>(request->grantedReplicas);
    }
    case CeilingHolder::kHpa:
      break;
  }
  auto hpa = partition::readHpa(object);
  if (!hpa) return hpa.status();
  if (hpa->uid != uid) return std::optional<int>{};
  return std::optional<int>(hpa->maxReplicas);
}

nlohmann::json CeilingRef::patch(int value) const {
  switch (holder) {
    case CeilingHolder::kScaledObject:
      return {{"spec", {{"maxReplicaCount", value}}}};
    case CeilingHolder::kCapacityRequest:
      return {{"status", {{"grantedReplicas", value}}}};
    case CeilingHolder::kHpa:
      break;
  }
  return {{"spec", {{"maxReplicas", value}}}};
}

nlohmann::json statusAnnotationMetadata(const HpaStatus& status) {
  return {{"annotations", {{std::string(k8s::kStatusAnnotation), encodeHpaStatus(status)}}}};
}

CeilingRef ceilingRefOf(const partition::HpaState& hpa) {
  if (hpa.capacityRequest) {
    return {capacityRequestStatusRef(hpa.ns, hpa.capacityRequest->meta.name), hpa.uid,
            CeilingHolder::kCapacityRequest, hpa.ceilingField()};
  }
  if (hpa.ownedByScaledObject()) {
    return {actuator_detail::scaledObjectsRef(hpa.ns).named(hpa.controller->name),
            hpa.controller->uid, CeilingHolder::kScaledObject, hpa.ceilingField()};
  }
  return {actuator_detail::hpaRef(hpa.ns, hpa.name), hpa.uid, CeilingHolder::kHpa,
          hpa.ceilingField()};
}

core::Result<partition::HpaState> getDemandOwner(kube::KubeClient& client, const std::string& ns,
                                                 const std::string& name) {
  const auto request = partition::capacityRequestName(name);
  if (!request) return actuator_detail::getHpa(client, ns, name);
  auto object = client.get(requestRef(ns, *request));
  if (!object) return object.status();
  auto read = partition::readCapacityRequest(*object);
  if (!read) return read.status();
  return partition::capacityRequestHpa(
      std::make_shared<const partition::CapacityRequest>(std::move(*read)));
}

EventTarget demandEventTarget(const std::string& ns, const std::string& name, std::string uid) {
  if (auto request = partition::capacityRequestName(name)) {
    return EventTarget{std::string(partition::kCapacityRequestKind),
                       std::string(partition::kCapacityRequestGroup) + "/" +
                           std::string(partition::kCapacityRequestVersion),
                       ns, *request, std::move(uid)};
  }
  return EventTarget::hpa(ns, name, std::move(uid));
}

}  // namespace gpuscale::reconciler
