// `gpuscale-reconciler cleanup`: the off-ramp (reconciler/cleanup.h): after the reconciler is
// stopped, waits for node operations in flight, restores each HPA's maxReplicas, and removes the
// reshape taint and every gpuscale.io/ key from nodes (optionally returning nodes to the stock GPU
// Operator configs).
//
//   cleanup [--kubeconfig PATH] [--state-namespace default] [--state-config-map NAME]
//           [--wait-timeout 10m] [--restore-stock-configs [--stock-mig-config all-disabled]
//           [--stock-device-plugin-config NAME]] [--keep-state]
//
// Exit 0 when nothing of gpuscale is left, 1 when a write failed or a node's MIG change outlived
// the wait (the report says which), 2 for bad usage or a cluster that cannot be read.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuscale::reconciler {

// `args` are the words after "cleanup".
int runCleanupCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The command's part of the flag reference (core::FlagSet::markdown).
std::string cleanupFlagReference();

}  // namespace gpuscale::reconciler
