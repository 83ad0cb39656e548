// Whether a pod holds (or may hold) a GPU of its node, for the check right before a reshape: a MIG
// change destroys the GPU's instances, so any pod that could be using one must stop it.
//
// A pod counts as a GPU user when any of these asks for an nvidia.com/* extended resource (in
// requests or limits): a regular container, an init container (the device plugin allocates
// devices to init containers too, and a pod's devices outlive its init phase), a sidecar (an init
// container with restartPolicy: Always, running beside the main containers), or pod-level
// resources. A pod with Dynamic Resource Allocation claims (spec.resourceClaims, or a
// container's resources.claims) counts as well: which device a claim binds is not known without
// reading the ResourceClaim and its DeviceClass, so the check assumes the worst. Pods that have
// finished (Succeeded, Failed) hold nothing.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "gpuscale/kube/client.h"

namespace gpuscale::reconciler {

// What makes `pod` a GPU user, for messages ("init container \"warmup\" requests
// nvidia.com/gpu"), or "" when nothing does. Malformed fields count as absent.
std::string gpuUseOf(const kube::Object& pod);

}  // namespace gpuscale::reconciler
