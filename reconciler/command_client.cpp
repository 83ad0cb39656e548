#include "command_client.h"

#include "gpuscale/kube/config.h"

namespace gpuscale::reconciler {

core::Result<std::shared_ptr<kube::RestKubeClient>> commandClient(const std::string& kubeconfig,
                                                                  std::string_view command) {
  auto config = kube::loadClientConfig(kubeconfig);
  if (!config) return config.status();
  config->userAgent = "gpuscale-reconciler/" + std::string(command);
  return kube::RestKubeClient::create(*config);
}

void addKubeconfigFlag(core::FlagSet& flags, std::string* path) {
  flags.addString("kubeconfig", path, "kubeconfig (default in-cluster, then $KUBECONFIG)");
}

}  // namespace gpuscale::reconciler
