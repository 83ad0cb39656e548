// The Kubernetes client of gpuscale-reconciler's one-shot commands (explain, cleanup, configmaps,
// preflight).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/rest_client.h"

namespace gpuscale::reconciler {

// A client of the kubeconfig at `kubeconfig` (empty: in-cluster, then $KUBECONFIG), whose user
// agent names the command: "gpuscale-reconciler/COMMAND". The error says why the kubeconfig or the
// client could not be set up.
core::Result<std::shared_ptr<kube::RestKubeClient>> commandClient(const std::string& kubeconfig,
                                                                  std::string_view command);

}  // namespace gpuscale::reconciler
