// `gpuscale-reconciler preflight`: whether the cluster is ready for act mode
// (gpuscale/reconciler/preflight.h): the API, the identity's permissions, the GPU Operator's
// namespace, ConfigMaps and ClusterPolicy, and the GPU nodes. Read-only. Run it as the reconciler
// (`kubectl exec` into its pod) to check its ServiceAccount, or with a kubeconfig.
//
//   preflight [--kubeconfig PATH] [--operator-namespace gpu-operator] [--state-namespace gpuscale]
//             [--output text|json] ...
//
// Exit 0 when no check fails (warnings allowed), 1 when one does, 2 for bad usage or a kubeconfig
// that does not load.
#pragma once

#include "gpuscale/core/subcommands.h"

namespace gpuscale::reconciler {

// What `preflight` runs, and its part of the flag reference, for the program's command table.
core::CommandHandler preflightCommand();

}  // namespace gpuscale::reconciler
