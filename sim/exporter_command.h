// `gpuscale-sim exporter [--listen HOST:PORT] [--port-file FILE] [--server triton|vllm]`: serves
// the demo pods' series on plain HTTP at /metrics for a Prometheus to scrape (the demo and the
// adapter's integration tests use it): Triton's (triton_model.h, the default) or vLLM's
// (vllm_model.h). Port 0 picks a free port; the bound port is printed ("listening on
// 127.0.0.1:PORT") and, with --port-file, written to FILE once the socket listens. Runs until
// SIGTERM/SIGINT (exit 0). Every response closes its connection (one scraper, tiny bodies).
#pragma once

#include "gpuscale/core/subcommands.h"

namespace gpuscale::sim {

// What `exporter` runs, and its part of the flag reference, for the program's command table.
core::CommandHandler exporterCommand();

}  // namespace gpuscale::sim
