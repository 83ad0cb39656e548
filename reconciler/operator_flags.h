// The flags that name the GPU Operator's namespace and ConfigMaps, declared once for the one-shot
// commands that read or write them (preflight, configmaps init); the defaults are the fields'.
#pragma once

#include "gpuscale/core/flag_set.h"
#include "gpuscale/reconciler/operator_config_maps.h"

namespace gpuscale::reconciler {

inline void addOperatorConfigMapFlags(core::FlagSet& flags, OperatorConfigMaps& o) {
  flags.addNonEmptyString("operator-namespace", &o.operatorNamespace,
                          "the GPU Operator's namespace");
  flags.addNonEmptyString("mig-config-map", &o.migConfigMap,
                          "the reconciler's mig-parted ConfigMap (ClusterPolicy "
                          "migManager.config.name)");
  flags.addNonEmptyString("default-mig-config-map", &o.defaultMigConfigMap,
                          "the GPU Operator's stock mig-parted ConfigMap");
  flags.addNonEmptyString("device-plugin-config-map", &o.devicePluginConfigMap,
                          "the device plugin's ConfigMap (ClusterPolicy devicePlugin.config.name)");
}

}  // namespace gpuscale::reconciler
