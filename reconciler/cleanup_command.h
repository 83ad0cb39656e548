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

#include "gpuscale/core/subcommands.h"

namespace gpuscale::reconciler {

// What `cleanup` runs, and its part of the flag reference, for the program's command table.
core::CommandHandler cleanupCommand();

}  // namespace gpuscale::reconciler
