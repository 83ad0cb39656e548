// gpuscale-reconciler: grows GPU partitions for HPAs held at their ceiling. Subcommands: plan, run,
// explain.
#include <iostream>
#include <string>
#include <vector>

#include "explain_command.h"
#include "gpuscale/core/version.h"
#include "plan_command.h"
#include "run_command.h"

namespace {

constexpr const char* kUsage =
    "usage: gpuscale-reconciler plan --from DUMP.json [--policy POLICY.yaml] [--output json|text]\n"
    "                                [--now RFC3339]\n"
    "\n"
    "  plan   read a `kubectl get nodes,pods,hpa,deployments,configmaps,priorityclasses -A -o "
    "json` dump (\"-\" "
    "for stdin)\n"
    "         and print the partition plan. Without --policy the built-in policy \"default\" "
    "applies to\n"
    "         HPAs annotated gpuscale.io/partition-policy: default.\n"
    "\n"
    "  --version  print the version\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--version" || args[0] == "version")) {
    gpuscale::core::printVersion(std::cout, "gpuscale-reconciler");
    return 0;
  }
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help" || args[0] == "help")) {
    std::cout << kUsage << "\n" << gpuscale::reconciler::runUsage() << "\n";
    gpuscale::reconciler::runExplainCommand({"--help"}, std::cout, std::cerr);
    return 0;
  }
  if (!args.empty() && args[0] == "explain") {
    return gpuscale::reconciler::runExplainCommand({args.begin() + 1, args.end()}, std::cout,
                                                   std::cerr);
  }
  if (!args.empty() && args[0] == "run") {
    return gpuscale::reconciler::runRunCommand({args.begin() + 1, args.end()}, std::cerr);
  }
  if (args.empty() || args[0] != "plan") {
    std::cerr << (args.empty() ? "gpuscale-reconciler: missing subcommand\n"
                               : "gpuscale-reconciler: unknown subcommand \"" + args[0] + "\"\n")
              << kUsage;
    return 2;
  }
  return gpuscale::reconciler::runPlanCommand({args.begin() + 1, args.end()}, std::cout, std::cerr);
}
