// Every label, annotation and taint key gpuscale reads or writes, in one place: the `gpuscale.io/`
// keys the project owns and the NVIDIA GPU Operator's node labels it acts through.
//
// Who may write a `gpuscale.io/` key matters: the reconciler trusts its own state keys only as far
// as whoever can edit the object they sit on. Node keys (intent, outcome, backoff) sit on Nodes,
// which tenants cannot write; of an HPA's keys only the policy name is read, and only among the
// policies that admit the HPA (partition/policy.h). The HPA-side state lives in the reconciler's
// state store (reconciler/hpa_state_store.h); docs/threat-model.md has the whole picture.
#pragma once

#include <string_view>

namespace gpuscale::k8s {

// HPA annotation: the name of the partition policy the HPA asks for (honoured only when that
// policy admits the HPA).
inline constexpr std::string_view kPolicyAnnotation = "gpuscale.io/partition-policy";
// Annotation on a workload an HPA scales through /scale (not a Deployment, StatefulSet or
// LeaderWorkerSet): how many pods one replica is, each needing its GPU partitions.
inline constexpr std::string_view kPodsPerReplicaAnnotation = "gpuscale.io/pods-per-replica";
// Node annotations of an operation in progress, its last outcome, the time before which a failed
// node is left alone, and the HPA's informational ceiling report (reconciler/intent.h has the
// formats).
inline constexpr std::string_view kIntentAnnotation = "gpuscale.io/intent";
inline constexpr std::string_view kOutcomeAnnotation = "gpuscale.io/outcome";
inline constexpr std::string_view kBackoffAnnotation = "gpuscale.io/backoff-until";
inline constexpr std::string_view kStatusAnnotation = "gpuscale.io/status";
// Node annotation: the MIG config to give back after a burst (partition/mig_restore.h).
inline constexpr std::string_view kMigRestoreAnnotation = "gpuscale.io/mig-restore";
// NoSchedule taint on a node while its MIG change runs (from before the last pod check until the
// MIG step ends), so no new pod lands on a GPU about to be rebuilt.
inline constexpr std::string_view kReshapeTaint = "gpuscale.io/reshape";
// Events' reportingComponent.
inline constexpr std::string_view kReconcilerComponent = "gpuscale.io/reconciler";
// Pod annotation read by the emulator: the GPU index a test pins the pod to.
inline constexpr std::string_view kPinnedGpuAnnotation = "gpuscale.io/sim-gpu";

// The GPU Operator's node labels: the mig-parted config to apply and mig-manager's state, the
// device plugin's config, the operands' deploy switches (prefix + operand).
inline constexpr std::string_view kMigConfigLabel = "nvidia.com/mig.config";
inline constexpr std::string_view kMigConfigStateLabel = "nvidia.com/mig.config.state";
inline constexpr std::string_view kDevicePluginConfigLabel = "nvidia.com/device-plugin.config";
inline constexpr std::string_view kDeployLabelPrefix = "nvidia.com/gpu.deploy.";

}  // namespace gpuscale::k8s
