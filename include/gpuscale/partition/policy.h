// Partition policies: which HPAs gpuscale may grow by repartitioning GPUs, with which levers and
// within which limits. Operators write them in YAML; `default` is built in.
//
// An HPA uses policy P when it carries the annotation `gpuscale.io/partition-policy: P` or is
// listed in P's `hpas`. File format (a single policy mapping, or `policies:` with a list of them):
//
//   policies:
//   - name: inference
//     hpas: [default/triton]           # "namespace/name", in addition to annotated HPAs
//     levers: [migReshape, timeSlicing]  # tried in this order
//     migProfiles: [1g.5gb, 2g.10gb]   # profiles a reshape may create; empty: the model's base
//     profiles timeSlicing:
//       maxReplicas: 4                 # per device (GPU or MIG instance)
//       perPodGpuMemory: 4Gi           # replicas never exceed partition memory / this
//     nodeSelector: {pool: gpu}        # nodes the reconciler may change
//     maxReplicas: {factor: 4}         # or {hard: 28}: cap on the HPA's maxReplicas
//     cooldown: {scaleUp: 1m, scaleDown: 10m}
//     tolerance: 0.1                   # the HPA controller's tolerance, for the wanted-replica
//     formula
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

#include "gpuscale/core/result.h"

namespace gpuscale::partition {

enum class Lever { kMigReshape, kTimeSlicing };
std::string_view leverName(Lever lever);  // "migReshape" | "timeSlicing"

struct Policy {
  std::string name;
  std::vector<std::string> hpas;
  std::vector<Lever> levers{Lever::kMigReshape, Lever::kTimeSlicing};
  std::set<std::string> migProfiles;
  int maxTimeSlicingReplicas = 4;
  std::optional<double> perPodGpuMemoryBytes;
  std::map<std::string, std::string> nodeSelector;
  std::optional<int>
      hardMaxReplicas;  // absolute cap; when unset, hardMaxFactor x current partitions
  double hardMaxFactor = 4;
  std::chrono::seconds scaleUpCooldown{0};
  std::chrono::seconds scaleDownCooldown{600};
  double tolerance = 0.1;

  // Whether the policy may change a node with these labels.
  bool selectsNode(const std::map<std::string, std::string>& labels) const;
  // The cap on maxReplicas for an HPA whose pods can currently get `currentPartitions` partitions.
  int hardMaxFor(int currentPartitions) const;
};

struct PolicySet {
  std::vector<Policy> policies;
  // The policy an HPA uses, or nullptr when gpuscale does not manage it.
  const Policy* forHpa(std::string_view ns, std::string_view name,
                       const std::map<std::string, std::string>& annotations) const;
};

// Parses a policy file. Errors (Status::invalid) carry line and column: unknown fields, unknown
// levers, duplicate names, maxReplicas < 1, malformed quantities or durations.
core::Result<PolicySet> parsePolicies(std::string_view yaml);

// The built-in set: one policy named "default" for HPAs annotated `gpuscale.io/partition-policy:
// default`, both levers (MIG reshape of idle GPUs first), time-slicing up to 4 replicas per device,
// hard max = 4 x the current partition count.
PolicySet defaultPolicies();

}  // namespace gpuscale::partition
