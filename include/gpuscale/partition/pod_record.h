// A Pod read once: everything the snapshot takes from a Pod, so a cache of these (the reconciler's
// pod cache, kept by its informer's handlers) lets a pass build the snapshot without reading any
// Pod's JSON again, and without keeping that JSON at all.
//
// Pods are the bulk of a cluster (tens of thousands beside a thousand nodes): reading each one per
// change instead of per pass, and keeping the typed value instead of its JSON tree, is what keeps a
// pass and the reconciler's memory small at fleet scale. A dump (`plan --from`, `explain --from`)
// goes through the same reader: buildSnapshot reads every Pod of a dump with readPodRecord, so
// what is planned offline is what the controller plans from its cache.
//
// Thread safety: a pure function; a PodRecord is an immutable value once read.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

// What a workload without a pod template borrows from its first pod (snapshot.h:
// ScaleTarget::templateFromPods): the pod's spec read as a template (readPodTemplate).
struct PodTemplateParts {
  ResourceCounts gpuRequests;
  Labels nodeSelector;
};

struct PodRecord {
  // The pod as readPod reads it; unset when it does not read (then `skipped` says why).
  std::optional<PodState> pod;
  std::optional<SkippedObject> skipped;
  // The pod's spec read as a pod template; unset without a spec or when it does not read as one.
  std::optional<PodTemplateParts> asTemplate;
};

// Reads a Pod (JSON as kube-apiserver serves it, whole or as keepReadFields keeps it). Never fails:
// a pod that does not read becomes a record with `skipped` set (kind "Pod", the reason and message
// readPod gives), exactly as the snapshot skips it.
PodRecord readPodRecord(const nlohmann::json& object);

}  // namespace gpuscale::partition
