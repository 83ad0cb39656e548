// gpuscale-sim: the GPU side of the test bed. This file only dispatches modes; each mode lives in
// its own file. Modes so far: `exporter` (Triton-like series for a Prometheus to scrape) and `run`
// (the GPU Operator emulator on a real cluster).
#include <array>
#include <iostream>
#include <span>
#include <string_view>
#include <vector>

#include "exporter_command.h"
#include "gpuscale/core/version.h"
#include "run_command.h"

namespace {

using Run = int (*)(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

struct Mode {
  std::string_view name;
  std::string_view summary;
  Run run;
};

constexpr std::array kModes = {
    Mode{"exporter",
         "serve Triton-like metrics of three pods (exporter [--listen H:P] [--port-file F])",
         &gpuscale::sim::runExporterCommand},
    Mode{"run",
         "emulate the GPU Operator on a cluster (run --scenario FILE [--kubeconfig KC] "
         "[--listen H:P])",
         &gpuscale::sim::runRunCommand},
};

int usage(std::ostream& out, int code) {
  out << "usage: gpuscale-sim <mode> [arguments]\n\nmodes:\n";
  for (const Mode& mode : kModes) out << "  " << mode.name << "\t" << mode.summary << "\n";
  out << "\n--version prints the version.\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) return usage(std::cerr, 2);
  if (args.front() == "-h" || args.front() == "--help") return usage(std::cout, 0);
  if (args.front() == "--version" || args.front() == "version") {
    gpuscale::core::printVersion(std::cout, "gpuscale-sim");
    return 0;
  }
  for (const Mode& mode : kModes) {
    if (args.front() == mode.name) {
      return mode.run(std::span<const std::string_view>(args).subspan(1), std::cout, std::cerr);
    }
  }
  std::cerr << "gpuscale-sim: unknown mode \"" << args.front() << "\"\n";
  return usage(std::cerr, 2);
}
