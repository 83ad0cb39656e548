// `gpuscale-sim run --scenario FILE [--kubeconfig KC] [--listen HOST:PORT] [--port-file FILE]
//  [--kwok-annotation KEY=VALUE] [--resync SECONDS] [--log-level LEVEL]`:
// the GPU Operator emulator (gpu_operator_emulator.h) on the cluster the kubeconfig names
// (default $KUBECONFIG). Serves /metrics (the emulator's own counters, the load model's Triton
// series when the scenario has a load, and every emulated GPU's dcgm-exporter series,
// dcgm_exposition.h) and /healthz on plain HTTP at --listen (default
// 127.0.0.1:0; the bound port is printed as "listening on HOST:PORT" and written to --port-file).
// The KWOK node annotation defaults to $GPUSCALE_KWOK_NODE_ANNOTATION[_VALUE] (up.sh's env), else
// kwok.x-k8s.io/node=fake. Runs until SIGTERM/SIGINT (exit 0); exit 2 on bad flags or scenario,
// 1 when the cluster cannot be reached or set up.
#pragma once

#include "gpuscale/core/subcommands.h"

namespace gpuscale::sim {

// What `run` runs, and its part of the flag reference, for the program's command table.
core::CommandHandler runCommand();

}  // namespace gpuscale::sim
