// Partition policies: which HPAs gpuscale may grow by repartitioning GPUs, with which levers and
// within which limits. Operators write them in YAML; nothing applies unless a policy file says so.
//
// Scope (the operator's decision, not the tenant's): a policy *admits* an HPA when the HPA is
// listed in its `hpas`, or when the HPA's namespace is in `hpaNamespaces` (["*"]: every
// namespace) and its labels match `hpaSelector` (no selector: every HPA there). A policy with
// neither `hpas` nor `hpaNamespaces` is rejected at load: no policy applies cluster-wide unless
// the operator writes ["*"].
//
// Selection (the tenant's choice, within that scope): an HPA uses policy P when it carries the
// annotation `gpuscale.io/partition-policy: P` and P admits it, or else when it is listed in a
// policy's `hpas`. An annotation naming a policy that does not exist or does not admit the HPA is
// ignored (PolicyMatch::ignored says so, for the caller to log and count).
//
// File format: a single policy mapping, or `policies:` with a list of them. Every key, its type,
// default and meaning is in docs/generated/policy.md, generated from the parser's declarations
// (policy_fields.h; `gpuscale-reconciler policy reference`). For example:
//
//   policies:
//   - name: inference
//     hpaNamespaces: [ml-serving]      # namespaces whose HPAs may opt in; ["*"]: all
//     hpaSelector: {matchLabels: {gpuscale.io/tier: gold}}
//     levers: [migReshape, timeSlicing]
//     timeSlicing: {maxReplicas: 4, perPodGpuMemory: 4Gi}
//     sharing: {acrossNamespaces: [a, b]}  # who may share a GPU (gpu_tenancy.h)
//     migModeChange: {enabled: false}  # see MigModeChangePolicy
//     maxReplicas: {factor: 4}
//     cooldown: {scaleUp: 1m, scaleDown: 10m}
//     anticipation: {enabled: true, horizon: 2m}
//
// Booleans that switch a feature are named `enabled` (the old `migModeChange.enable` is accepted
// with a warning).
//
// Thread safety: values; parse functions are pure.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/result.h"

namespace gpuscale::partition {

enum class Lever { kMigReshape, kTimeSlicing, kMps };
std::string_view leverName(Lever lever);  // "migReshape" | "timeSlicing" | "mps"

// Acting ahead of the ceiling (see ceiling_forecast.h). Every knob is optional.
struct Anticipation {
  bool enabled = true;
  std::chrono::seconds horizon{120};
  double minConfidence = 0.6;
  int minObservations = 3;
  // A trend must span at least this long (two default HPA sync periods): a start-up transient,
  // a few seconds of pods coming up, is not a trend.
  std::chrono::seconds minSpan{30};
  std::map<Lever, std::chrono::seconds> leadTime{{Lever::kTimeSlicing, std::chrono::seconds{20}},
                                                 {Lever::kMigReshape, std::chrono::seconds{60}},
                                                 {Lever::kMps, std::chrono::seconds{30}}};
};

// The MPS lever (mps_sharing.h): the device plugin's `sharing.mps`, which splits a whole GPU's
// memory and compute evenly between its replicas and enforces the memory limit.
struct MpsPolicy {
  int maxReplicas = 4;  // per GPU; at most kMpsMaxClientsPerGpu (48)
  // Memory one pod needs; replicas never leave a replica less. Unset: the policy's
  // timeSlicing.perPodGpuMemory, when that is set.
  std::optional<double> perPodGpuMemoryBytes;
  // Whether nodes whose GPUs hold pods may change. A change restarts the node's MPS control daemon
  // and sets the GPUs' compute mode, which running CUDA processes may not survive unharmed (the
  // device plugin does not document it); by default only nodes without GPU pods change.
  bool changeBusyNodes = false;
};

// Whether a reshape may switch a GPU's MIG mode: enable MIG on a whole GPU (MIG disabled) of a
// MIG-capable model to give it the partitions a blocked workload needs, and, with
// `migGiveBack: restore`, disable it again once the burst is over. Off by default, because a
// mode change is much heavier than a geometry change:
// - it needs a GPU reset on Ampere (A100, A30): mig-parted resets *every* GPU of the node when any
//   mode change is pending, and clears every MIG-enabled GPU the config selects, so no GPU of the
//   node may hold a process; the planner switches mode only on nodes with no GPU pod at all;
// - under hypervisor pass-through and on some cloud VMs the GPU cannot be reset in place
//   (NVML answers "reset required") and the node must reboot: mig-manager then sets
//   `nvidia.com/mig.config.state=rebooting` and reboots the node, which restarts every pod on it,
//   GPU or not;
// - with a preinstalled driver mig-manager stops host GPU clients (DCGM, nvsm, ...) and, for a
//   mode change only, kubelet itself, and waits 30 s;
// - as for every mig-manager run, the device plugin, GPU Feature Discovery and dcgm-exporter are
//   paused on the whole node for its duration, so the node's GPU resources read 0 allocatable
//   and GPU metrics go missing for every pod of the node.
// Operators who know their platform resets in place and whose GPU nodes may lose kubelet briefly
// turn it on.
struct MigModeChangePolicy {
  bool enabled = false;
};

struct Policy {
  std::string name;
  std::vector<std::string> hpas;
  std::vector<std::string> hpaNamespaces;  // {"*"}: every namespace; empty: only `hpas`
  core::LabelSelector hpaSelector;         // empty: every HPA of those namespaces
  std::vector<Lever> levers{Lever::kMigReshape, Lever::kTimeSlicing};
  std::set<std::string> migProfiles;
  int maxTimeSlicingReplicas = 4;
  std::optional<double> perPodGpuMemoryBytes;
  MpsPolicy mps;
  // Namespaces whose pods may share one GPU with one another once time-slicing or MPS is raised on
  // it (`sharing.acrossNamespaces`; gpu_tenancy.h). Empty (the default): pods share a GPU only
  // with pods of their own namespace; {"*"}: with any namespace, written out on purpose.
  std::vector<std::string> shareAcrossNamespaces;
  MigModeChangePolicy migModeChange;
  // Utilisation (0..1) at which a node's devices count as saturated: extra time-slicing replicas
  // there add pods, not throughput (lever_choice.h).
  double timeSlicingSaturation = 0.8;
  std::map<std::string, std::string> nodeSelector;
  std::vector<core::LabelSelector> excludeNodes;  // a node any of them matches is never changed
  std::optional<int>
      hardMaxReplicas;  // absolute cap; when unset, hardMaxFactor x current partitions
  double hardMaxFactor = 4;
  std::chrono::seconds scaleUpCooldown{0};
  std::chrono::seconds scaleDownCooldown{600};
  double tolerance = 0.1;
  bool migRestore = false;  // migGiveBack: restore
  // When blocked HPAs compete for the same idle GPUs, higher priorities are served first; equal
  // priorities share the shortfall (contention.h). Unset: the spec.priority admission gave the
  // HPA's target pods decides (workload_priority.h).
  std::optional<int> priority;
  Anticipation anticipation;

  // Whether the operator let this policy manage the HPA `ns`/`name` with these labels.
  bool admits(std::string_view ns, std::string_view name,
              const std::map<std::string, std::string>& labels) const;
  // Whether the policy may change a node with these labels: nodeSelector matches, no excludeNodes
  // selector does.
  bool selectsNode(const std::map<std::string, std::string>& labels) const;
  // The cap on maxReplicas for an HPA whose pods can currently get `currentPartitions` partitions.
  int hardMaxFor(int currentPartitions) const;
  // The GPU memory one pod needs under MPS: mps.perPodGpuMemory, else timeSlicing.perPodGpuMemory.
  std::optional<double> mpsPerPodGpuMemoryBytes() const;
};

// The policy an HPA uses, and the policy its annotation named in vain (not defined, or defined
// but not admitting the HPA; "" when the annotation is absent or honoured).
struct PolicyMatch {
  const Policy* policy = nullptr;
  std::string ignored;
  std::string ignoredWhy;  // "is not defined" | "does not admit this HPA"
};

struct PolicySet {
  std::vector<Policy> policies;
  // What the file says in an old spelling ("line L, column C: migModeChange.enable is deprecated,
  // use migModeChange.enabled"), for the caller to print or log.
  std::vector<std::string> warnings;
  const Policy* byName(std::string_view name) const;
  PolicyMatch match(std::string_view ns, std::string_view name,
                    const std::map<std::string, std::string>& labels,
                    const std::map<std::string, std::string>& annotations) const;
  // match(...).policy: the policy an HPA uses, or nullptr when gpuscale does not manage it.
  const Policy* forHpa(std::string_view ns, std::string_view name,
                       const std::map<std::string, std::string>& labels,
                       const std::map<std::string, std::string>& annotations) const;
};

// Parses a policy file. Errors (Status::invalid) carry line and column: unknown fields, unknown
// levers, duplicate names, maxReplicas < 1, malformed quantities or durations, a policy without
// scope (neither hpas nor hpaNamespaces), hpaSelector without hpaNamespaces, "*" mixed with
// namespace names, invalid namespace names, selectors that do not parse.
core::Result<PolicySet> parsePolicies(std::string_view yaml);

// The built-in levers and limits as one policy named "default", scoped to every namespace
// (["*"]): both levers (MIG reshape of idle GPUs first), time-slicing up to 4 replicas per device,
// hard max = 4 x the current partition count. Only the offline `plan` command (a what-if that
// writes nothing) and tests use it; `run` without --config manages nothing.
PolicySet defaultPolicies();

// The policy file reference (markdown): every key with its type, default and meaning, from the
// parser's own declarations. `regenerate` is the command that prints it, named on the page.
std::string policyReference(std::string_view regenerate);

}  // namespace gpuscale::partition
