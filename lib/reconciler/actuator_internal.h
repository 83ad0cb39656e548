// Pieces shared by the actuator's sources (private to lib/reconciler): API references, fresh reads
// through the one reader (partition/kube_objects.h), and the pieces of a node write.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gpuscale/kube/client.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/reconciler/intent.h"
#include "gpuscale/reconciler/optimistic_write.h"

namespace gpuscale::reconciler::actuator_detail {

kube::ResourceRef nodeRef(const std::string& name);
kube::ResourceRef hpaRef(const std::string& ns, const std::string& name);
kube::ResourceRef configMapRef(const std::string& ns, const std::string& name);
// KEDA's ScaledObjects in `ns` (every namespace when empty).
kube::ResourceRef scaledObjectsRef(std::string_view ns = {});

// A fresh read of a Node or an HPA. Errors: the GET's, or Status::invalid when the object does not
// read.
core::Result<partition::NodeObject> getNode(kube::KubeClient& client, const std::string& name);
core::Result<partition::HpaState> getHpa(kube::KubeClient& client, const std::string& ns,
                                         const std::string& name);

// The uid of an object a write answered with ("" when it does not read).
std::string uidOf(const kube::Object& object);

// What a write's change function answers when there is nothing to write.
inline core::Result<std::optional<kube::Object>> noChange() {
  return std::optional<kube::Object>{};
}

// Merge-patches Node `node` with what `change` answers for a fresh read of it, only while the
// node's intent annotation is still `intent` (exactly, or an intent of the same plan); otherwise
// nothing is written. Retried on 409 (optimistic_write.h).
enum class IntentMatch { kExact, kSamePlan };
using NodeChangeFn =
    std::function<core::Result<std::optional<kube::Object>>(const partition::NodeObject&)>;
core::Result<WriteResult> patchNodeOfIntent(kube::KubeClient& client, const std::string& node,
                                            const NodeIntent& intent, IntentMatch match,
                                            const NodeChangeFn& change);

// `node`'s spec.taints with k8s::kReshapeTaint present or absent (others kept as they are), or
// nullopt when it already is so. The whole list goes in the merge patch (merge patches replace
// arrays); the read resourceVersion it carries keeps a concurrent taint change from being lost.
std::optional<nlohmann::json> reshapeTaints(const partition::NodeObject& node, bool present);

}  // namespace gpuscale::reconciler::actuator_detail
