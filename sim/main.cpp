// gpuscale-sim: the GPU side of the test bed. This file only dispatches modes; each mode lives in
// its own file: `exporter` (Triton's or vLLM's series for a Prometheus to scrape) and `run` (the
// GPU Operator emulator on a real cluster).
#include <iostream>
#include <string>
#include <vector>

#include "exporter_command.h"
#include "gpuscale/core/subcommands.h"
#include "run_command.h"

int main(int argc, char** argv) {
  namespace sim = gpuscale::sim;
  const gpuscale::core::Program program{
      "gpuscale-sim",
      {
          {"exporter",
           "serve the metrics of demo Triton or vLLM pods (exporter [--listen H:P] [--port-file F] "
           "[--server triton|vllm])",
           sim::exporterCommand()},
          {"run",
           "emulate the GPU Operator on a cluster (run --scenario FILE [--kubeconfig KC] "
           "[--listen H:P])",
           sim::runCommand()},
      }};
  return gpuscale::core::runProgram(program, std::vector<std::string>(argv + 1, argv + argc),
                                    std::cout, std::cerr);
}
