// `gpuscale-reconciler configmaps init`: creates the reconciler's mig-parted and device-plugin
// ConfigMaps from the ones the GPU Operator reads today (gpuscale/reconciler/config_maps_init.h),
// the on-ramp step before the ClusterPolicy is pointed at them. A command of its own, not a
// preflight flag: preflight stays read-only, so it can run as the observe-only reconciler.
//
//   configmaps init [--kubeconfig PATH] [--operator-namespace gpu-operator] ...
//
// Exit 0 when every ConfigMap exists afterwards (created now or left as it was), 1 when one could
// not be created, 2 for bad usage or a kubeconfig that does not load.
#pragma once

#include "gpuscale/core/subcommands.h"

namespace gpuscale::reconciler {

// The command's handler (core::flagCommand).
core::CommandHandler configMapsCommand();

}  // namespace gpuscale::reconciler
