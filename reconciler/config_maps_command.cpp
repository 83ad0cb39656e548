#include "config_maps_command.h"

#include <iostream>

#include "command_client.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/subcommands.h"
#include "gpuscale/reconciler/config_maps_init.h"
#include "operator_flags.h"

namespace gpuscale::reconciler {
namespace {

struct ConfigMapsArgs {
  std::string kubeconfig;
  ConfigMapsInitOptions options;
};

core::FlagSet configMapsFlagSet(ConfigMapsArgs& a) {
  core::FlagSet flags(
      "gpuscale-reconciler configmaps", "gpuscale-reconciler configmaps init [flags]",
      "init: before the ClusterPolicy is pointed at the reconciler's ConfigMaps, create them from "
      "the ones the GPU Operator reads today: the mig-parted one with every config of the "
      "ConfigMap the ClusterPolicy's migManager.config.name names (else the operator's stock "
      "one), the device plugin's as a copy of the one devicePlugin.config.name names (else with "
      "one key `default`: version: v1). Existing ConfigMaps are left as they are; a second run "
      "says nothing to do. Exit 0: both exist; 1: one could not be created.");
  addKubeconfigFlag(flags, &a.kubeconfig);
  addOperatorConfigMapFlags(flags, a.options);
  return flags;
}

int runConfigMaps(ConfigMapsArgs& a, const std::vector<std::string>& words,
                  const core::FlagSet& flags, std::ostream& out, std::ostream& err) {
  if (words != std::vector<std::string>{"init"}) return flags.usageError(err, "expected `init`");
  auto client = commandClient(a.kubeconfig, "configmaps");
  if (!client) return flags.usageError(err, client.status().message());
  const ConfigMapsInitReport report = initConfigMaps(**client, a.options);
  out << configMapsInitText(report);
  return report.ok() ? core::kExitOk : core::kExitFailed;
}

}  // namespace

core::CommandHandler configMapsCommand() {
  return core::flagCommand(configMapsFlagSet, runConfigMaps);
}

}  // namespace gpuscale::reconciler
