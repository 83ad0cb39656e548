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

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuscale::reconciler {

// `args` are the words after "preflight".
int runPreflightCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The command's part of the flag reference (core::FlagSet::markdown).
std::string preflightFlagReference();

}  // namespace gpuscale::reconciler
