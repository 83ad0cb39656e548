// The Node objects and patches the emulator writes, as pure functions of what it wants the node to
// show: the KWOK-managed Node to create, the merge patch of its labels, and the merge patch of its
// `status` subresource (capacity and allocatable of `nvidia.com/*`).
//
// Patches contain only what differs; keys the emulator owns but no longer wants are set to null
// (merge-patch deletion): GFD labels (isGfdLabel) and `nvidia.com/*` resources. Other labels and
// resources (cpu, memory, pods, labels set by people or the reconciler) are never touched.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "gpuscale/kube/client.h"
#include "gpuscale/sim/node_advertisement.h"
#include "gpuscale/sim/scenario.h"

namespace gpuscale::sim {

// Counts as Kubernetes quantities: {"nvidia.com/gpu": "4"}.
kube::Object resourcesJson(const ResourceCounts& counts);

// The Node to create: KWOK annotation, kubernetes.io/{hostname,os,arch}, the spec's labels, then
// `labels` (GFD and operator labels, which win), capacity and allocatable = the spec's cpu, memory,
// pods plus the advertised GPU resources, nodeInfo, phase Running.
kube::Object newNodeObject(const GpuNodeSpec& spec, const Labels& labels,
                           const NodeAdvertisement& adv, const std::string& kwokAnnotationKey,
                           const std::string& kwokAnnotationValue);

// The labels map of a merge patch that makes `node` carry `desired`; empty when nothing differs.
kube::Object labelPatch(const kube::Object& node, const Labels& desired);

// The status of a merge patch that makes `node`'s GPU capacity and allocatable equal to `adv`'s;
// empty when nothing differs.
kube::Object statusPatch(const kube::Object& node, const NodeAdvertisement& adv);

}  // namespace gpuscale::sim
