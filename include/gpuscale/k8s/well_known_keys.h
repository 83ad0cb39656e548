// Every label, annotation and taint key gpuscale reads or writes, in one place: the `gpuscale.io/`
// keys the project owns and the NVIDIA GPU Operator's node labels it acts through.
//
// Who may write a `gpuscale.io/` key matters: the reconciler trusts its own state keys
// (intent, outcome, backoff, status, last change, original maxReplicas) only as far as whoever can
// edit the object they sit on; docs/reconciler.md says which object each lives on.
#pragma once

#include <string_view>

namespace gpuscale::k8s {

// HPA annotation: the name of the partition policy that manages this HPA.
inline constexpr std::string_view kPolicyAnnotation = "gpuscale.io/partition-policy";
// HPA annotations the reconciler writes when it changes maxReplicas: when (RFC 3339), and the
// value before its first raise (what give-back returns to).
inline constexpr std::string_view kLastChangeAnnotation = "gpuscale.io/last-change";
inline constexpr std::string_view kOriginalMaxAnnotation = "gpuscale.io/original-max-replicas";
// Node and HPA annotations of an operation in progress, its last outcome, the time before which a
// failed node is left alone, and the HPA's ceiling report (reconciler/intent.h has the formats).
inline constexpr std::string_view kIntentAnnotation = "gpuscale.io/intent";
inline constexpr std::string_view kOutcomeAnnotation = "gpuscale.io/outcome";
inline constexpr std::string_view kBackoffAnnotation = "gpuscale.io/backoff-until";
inline constexpr std::string_view kStatusAnnotation = "gpuscale.io/status";
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
