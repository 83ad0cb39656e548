// The fields of a Kubernetes object that the readers of kube_objects.h look at, and nothing else:
// what the reconciler's informers keep of each object they cache (reconciler/controller.h; Pods
// are read into typed records instead and not kept as JSON at all: reconciler/pod_cache.h), so
// the caches grow with the number of objects, not with their size (a pod's environment, volumes
// and managedFields, a Deployment's status, kubectl's last-applied-configuration annotation are
// most of a real object and never read).
//
// Kept, per kind (every other field is dropped):
//   every kind   apiVersion, kind; metadata.name, namespace, uid, resourceVersion, labels,
//                creationTimestamp, deletionTimestamp, and the annotations under `gpuscale.io/`
//                (the only annotations any reader looks at: k8s/well_known_keys.h and
//                gpu_memory_need.h name them).
//   Node         spec.unschedulable, spec.taints; status.allocatable's nvidia.com/ entries.
//   Pod          spec.nodeName, priority, nodeSelector, resources, resourceClaims, and of each
//                container and init container: name, image, command, args, resources,
//                restartPolicy (GPU requests, sidecars, the GPU memory need read from command
//                lines); status.phase, nominatedNodeName, startTime, the Ready and
//                PodScheduled conditions' type, status, reason and message ("Insufficient
//                nvidia.com/..."), and the resourceClaimStatuses' name and resourceClaimName
//                (the claims made from the pod's ResourceClaimTemplates).
//   Deployment, StatefulSet, ReplicaSet
//                spec.replicas, spec.selector, and the pod template's annotations (as above) and
//                spec (as a Pod's). No status.
//   HorizontalPodAutoscaler
//                metadata.ownerReferences (a KEDA ScaledObject owning the HPA), the whole spec
//                (metrics and their targets), status.currentReplicas, desiredReplicas,
//                currentMetrics and the conditions' type, status and reason.
//   ConfigMap    data.
//   ResourceSlice
//                spec.driver, pool, nodeName, sharedCounters, and of each device: name,
//                attributes, allowMultipleAllocations, consumesCounters, capacity values (not
//                their requestPolicy), taint effects.
//   DeviceClass  spec.selectors, spec.extendedResourceName (not the driver config).
//   ResourceClaimTemplate, ResourceClaim
//                the claim spec's devices.requests and devices.constraints (not the config);
//                a claim's status.allocation.devices.results (request, driver, pool, device)
//                and status.reservedFor (resource, name). Not status.devices.
//   Scale        spec.replicas, status.replicas and status.selector.
//   other kinds  everything: the object is returned as it came.
// keepScalableWorkloadFields keeps, of a workload an HPA scales through /scale
// (readScalableWorkload):
//   LeaderWorkerSet  spec.replicas, spec.leaderWorkerTemplate.size, and its worker and leader
//                    templates as a Deployment's pod template.
//   any other kind   as a Deployment (spec.replicas, spec.selector, spec.template); the
//                    annotation gpuscale.io/pods-per-replica is under gpuscale.io/.
//
// A field whose JSON type is not what the reader expects (a hand-written object, never an API
// server) is kept whole, so the reader reports it exactly as it would on the full object: the
// contract is that every reader of kube_objects.h gives the same typed value (or the same error)
// for keepReadFields(kind, o) as for o, except the annotations dropped above. A reader that starts
// reading a new field adds it here; tests/unit/partition/read_fields_test.cpp checks the
// equivalence on the seed dumps and on objects padded with everything a real cluster adds.
//
// Thread safety: pure function.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuscale::partition {

// `object` (of kind `kind`, as kube_objects.h names kinds) with only the fields above.
nlohmann::json keepReadFields(std::string_view kind, nlohmann::json object);

// `object`, a workload of kind `kind` an HPA scales through /scale, with only the fields above.
nlohmann::json keepScalableWorkloadFields(std::string_view kind, nlohmann::json object);

// Whether keepReadFields keeps the annotation `key` (a `gpuscale.io/` key).
bool keepsAnnotation(std::string_view key);

}  // namespace gpuscale::partition
