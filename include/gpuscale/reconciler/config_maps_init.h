// `gpuscale-reconciler configmaps init`: creates the reconciler's GPU Operator ConfigMaps before
// the ClusterPolicy is repointed at them, so mig-manager and the device plugin never read a
// ConfigMap that does not exist yet (the reconciler itself creates them only on its first MIG or
// time-slicing change).
//
// What it creates, from what the cluster holds now:
//   mig-parted ConfigMap      (options.migConfigMap, key `config.yaml`) with every config of the
//                             ConfigMap mig-manager reads today: the one the ClusterPolicy's
//                             spec.migManager.config.name names when that is another one and
//                             readable, then the operator's stock options.defaultMigConfigMap (an
//                             earlier source wins a name both define; partition::carryOverConfigs,
//                             as the reconciler's own MIG writes do). No source readable: nothing
//                             is created and the result says why (an empty file would leave every
//                             node's current config unresolvable).
//   device-plugin ConfigMap   (options.devicePluginConfigMap): a copy of the data of the one the
//                             ClusterPolicy's spec.devicePlugin.config.name names when that is
//                             another one and readable; else one key `default` holding
//                             `version: v1` (the plugin's flags as the operator sets them: the
//                             device plugin's "named" fallback selects it for nodes without a
//                             nvidia.com/device-plugin.config label).
// An existing ConfigMap is left exactly as it is (never merged into or rewritten); a second run
// therefore creates nothing. A create that loses a race to another writer counts as existing.
//
// Thread safety: a function; the client must be thread-safe.
#pragma once

#include <string>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/reconciler/operator_config_maps.h"

namespace gpuscale::reconciler {

struct ConfigMapsInitOptions : OperatorConfigMaps {};

enum class ConfigMapInitOutcome { kCreated, kExists, kFailed };

struct ConfigMapInit {
  std::string name;  // namespace/name
  ConfigMapInitOutcome outcome = ConfigMapInitOutcome::kExists;
  std::string detail;  // what it was created from, or why it was not
};

struct ConfigMapsInitReport {
  std::vector<ConfigMapInit> configMaps;  // the mig-parted one, then the device plugin's
  bool ok() const;                        // none failed
  bool changed() const;                   // one was created
};

ConfigMapsInitReport initConfigMaps(kube::KubeClient& client, const ConfigMapsInitOptions& options);

// One line per ConfigMap ("created gpu-operator/gpuscale-mig-parted-config: 12 configs from ..."),
// then "nothing to do: ..." when none was created and none failed.
std::string configMapsInitText(const ConfigMapsInitReport& report);

// The mig-parted files (`config.yaml`) of the ConfigMaps `names` of `ns`, in order, skipping the
// ones that are absent, unreadable or not a valid file (each skipped one is described in
// `skipped` when given). The sources partition::carryOverConfigs takes, shared by the reconciler's
// MIG writes and initConfigMaps.
std::vector<partition::MigPartedConfig> readMigPartedConfigMaps(
    kube::KubeClient& client, const std::string& ns, const std::vector<std::string>& names,
    std::vector<std::string>* skipped = nullptr);

}  // namespace gpuscale::reconciler
