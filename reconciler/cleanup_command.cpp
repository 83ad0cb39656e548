#include "cleanup_command.h"

#include <iostream>

#include "command_client.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/subcommands.h"
#include "gpuscale/reconciler/cleanup.h"

namespace gpuscale::reconciler {
namespace {

struct CleanupArgs {
  std::string kubeconfig;
  CleanupOptions options;
};

core::FlagSet cleanupFlagSet(CleanupArgs& a) {
  core::FlagSet flags(
      "gpuscale-reconciler cleanup", "gpuscale-reconciler cleanup [flags]",
      "The off-ramp, once the reconciler is stopped (scaled to 0 or uninstalled, or by "
      "--stop-deployment): waits for MIG "
      "changes in flight, restores each HPA's maxReplicas from the state store, removes the "
      "reshape taint and every gpuscale.io/ label and annotation from nodes and gpuscale.io/status "
      "from HPAs, then deletes the state store. With --restore-stock-configs, nodes labelled with "
      "gpuscale's own MIG or device-plugin configs get the stock ones. Safe to run again. Exit 0: "
      "nothing of gpuscale left; 1: a write failed or a MIG change outlived the wait.");
  addKubeconfigFlag(flags, &a.kubeconfig);
  flags.addNonEmptyString("state-namespace", &a.options.state.ns,
                          "the reconciler's namespace (the chart's release namespace)");
  flags.addNonEmptyString("state-config-map", &a.options.state.name,
                          "the ConfigMap that keeps each HPA's record");
  flags.addDuration("wait-timeout", &a.options.waitTimeout,
                    "bound on the wait for MIG changes in flight");
  flags.addBool("restore-stock-configs", &a.options.restoreStockConfigs,
                "return nodes labelled with gpuscale's configs to the stock ones");
  flags.addNonEmptyString("stock-mig-config", &a.options.stockMigConfig,
                          "the stock MIG config label value (with --restore-stock-configs)");
  flags.addString("stock-device-plugin-config", &a.options.stockDevicePluginConfig,
                  "the stock device-plugin config label value (empty: the label is removed)");
  flags.addBool("keep-state", &a.options.keepStateStore, "keep the state store ConfigMap");
  flags.addString("stop-deployment", &a.options.stopDeployment,
                  "first scale this Deployment of the state namespace (the reconciler's) to 0 and "
                  "wait for its pods to end (the chart's uninstall hook)");
  return flags;
}

int runCleanup(CleanupArgs& a, const core::FlagSet& flags, std::ostream& out, std::ostream& err) {
  auto usage = [&](const std::string& message) { return flags.usageError(err, message); };
  auto client = commandClient(a.kubeconfig, "cleanup");
  if (!client) return usage(client.status().message());
  std::shared_ptr<kube::KubeClient> kc = std::move(*client);
  auto report = cleanup(kc, a.options);
  if (!report) {
    err << "gpuscale-reconciler cleanup: " << report.status().message() << "\n";
    return core::kExitError;
  }
  out << cleanupReportText(*report);
  return report->clean() ? core::kExitOk : core::kExitFailed;
}

}  // namespace

core::CommandHandler cleanupCommand() { return core::flagCommand(cleanupFlagSet, runCleanup); }

}  // namespace gpuscale::reconciler
