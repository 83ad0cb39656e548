// Where the GPU Operator runs and the ConfigMaps its ClusterPolicy names, as the one-shot commands
// that check or create them (preflight, configmaps init) take them; the defaults are the chart's.
#pragma once

#include <string>

namespace gpuscale::reconciler {

struct OperatorConfigMaps {
  std::string operatorNamespace = "gpu-operator";
  std::string migConfigMap = "gpuscale-mig-parted-config";  // ClusterPolicy migManager.config.name
  std::string defaultMigConfigMap = "default-mig-parted-config";  // the operator's stock one
  std::string devicePluginConfigMap = "device-plugin-config";  // ClusterPolicy devicePlugin.config
};

}  // namespace gpuscale::reconciler
