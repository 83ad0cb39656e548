// A Node, HorizontalPodAutoscaler, Deployment, StatefulSet or ReplicaSet read once: what the
// snapshot takes from it, so a cache of these (the reconciler keeps one per watched kind, beside
// its pod cache, reconciler/read_cache.h) lets a pass build the snapshot without reading those
// objects' JSON again every pass. What pod_record.h is for Pods, for the kinds that read from the
// object alone (no other object needed: a Node's MIG layout is resolved in the ConfigMaps when the
// snapshot is built, from the NodeObject read here).
//
// A dump (`plan --from`, `explain --from`) goes through the same reader: buildSnapshot reads every
// object of these kinds with readObjectRecord, so what is planned offline is what the controller
// plans from its caches.
//
// Thread safety: pure functions; an ObjectRecord is an immutable value once read.
#pragma once

#include <optional>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

struct ObjectRecord {
  // The object as its reader reads it (readNode, readHpa, readWorkload); monostate when it does
  // not read (then `skipped` says why).
  std::variant<std::monostate, NodeObject, HpaState, ScaleTarget> value;
  std::optional<SkippedObject> skipped;
};

// Whether readObjectRecord reads objects of `kind`: Node, HorizontalPodAutoscaler, Deployment,
// StatefulSet, ReplicaSet.
bool readsAsRecord(std::string_view kind);

// Reads an object of a kind readsAsRecord takes (JSON as kube-apiserver serves it, whole or as
// keepReadFields keeps it). Never fails: an object that does not read becomes a record with
// `skipped` set (its kind, the reason and message its reader gives), exactly as the snapshot skips
// it. Precondition: readsAsRecord(kind).
ObjectRecord readObjectRecord(std::string_view kind, const nlohmann::json& object);

}  // namespace gpuscale::partition
