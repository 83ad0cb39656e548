// The Kubernetes client of gpuscale-reconciler's commands (explain, cleanup, configmaps,
// preflight; run's flag) and the --kubeconfig flag that names its kubeconfig.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/result.h"
#include "gpuscale/kube/rest_client.h"

namespace gpuscale::reconciler {

// A client of the kubeconfig at `kubeconfig` (empty: in-cluster, then $KUBECONFIG), whose user
// agent names the command: "gpuscale-reconciler/COMMAND". The error says why the kubeconfig or the
// client could not be set up.
core::Result<std::shared_ptr<kube::RestKubeClient>> commandClient(const std::string& kubeconfig,
                                                                  std::string_view command);

// Declares --kubeconfig (optional: empty means in-cluster, then $KUBECONFIG) bound to `path`.
void addKubeconfigFlag(core::FlagSet& flags, std::string* path);

}  // namespace gpuscale::reconciler
