#include "preflight_command.h"

#include <iostream>
#include <optional>

#include "command_client.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/subcommands.h"
#include "gpuscale/reconciler/preflight.h"
#include "operator_flags.h"
#include "plan_command.h"

namespace gpuscale::reconciler {
namespace {

struct PreflightArgs {
  std::string kubeconfig;
  std::string policy;
  std::string output = "text";
  PreflightOptions options;
};

core::FlagSet preflightFlagSet(PreflightArgs& a) {
  core::FlagSet flags(
      "gpuscale-reconciler preflight", "gpuscale-reconciler preflight [flags]",
      "Whether the cluster is ready for --mode=act, before switching: kube-apiserver answers; the "
      "identity (the ServiceAccount's in the reconciler's pod, else the kubeconfig's) has every "
      "permission act mode needs (SelfSubjectAccessReviews; the missing ones are listed); the GPU "
      "Operator's namespace and ConfigMaps exist; each ClusterPolicy points mig-manager and the "
      "device plugin at the reconciler's ConfigMaps; the GPU Operator's release, its mig-manager "
      "and device plugin; GPU nodes and their MIG state; with --policy, the GPU nodes each policy "
      "may change. One line per "
      "check (ok, warn, fail) with a hint. Writes nothing. Exit 0: no check failed; 1: one did.");
  addKubeconfigFlag(flags, &a.kubeconfig);
  addOperatorConfigMapFlags(flags, a.options);
  flags.addNonEmptyString("state-namespace", &a.options.ns,
                          "the reconciler's namespace: its state ConfigMap and Lease");
  flags.addNonEmptyString("state-config-map", &a.options.stateConfigMap,
                          "the reconciler's state ConfigMap");
  flags.addNonEmptyString("leader-elect-name", &a.options.leaseName, "the reconciler's Lease");
  flags.addString("policy", &a.policy,
                  "the reconciler's policy file: how many GPU nodes each policy may change (in "
                  "its pod: /etc/gpuscale/policy.yaml)");
  addOutputFlag(flags, &a.output);
  return flags;
}

int runPreflight(PreflightArgs& a, const core::FlagSet& flags, std::ostream& out,
                 std::ostream& err) {
  std::optional<partition::PolicySet> policies;
  if (!a.policy.empty()) {
    policies = loadPolicies(a.policy, err);
    if (!policies) return flags.usageError(err, "the policy file " + a.policy + " is not usable");
    a.options.policies = &*policies;
  }
  auto client = commandClient(a.kubeconfig, "preflight");
  if (!client) return flags.usageError(err, client.status().message());
  const PreflightReport report = preflight(**client, a.options);
  out << (a.output == "json" ? preflightJson(report) : preflightText(report));
  return report.passed() ? core::kExitOk : core::kExitFailed;
}

}  // namespace

core::CommandHandler preflightCommand() {
  return core::flagCommand(preflightFlagSet, runPreflight);
}

}  // namespace gpuscale::reconciler
