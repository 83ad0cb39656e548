// gpuscale-reconciler: grows GPU partitions for HPAs held at their ceiling. This file only
// dispatches subcommands; each lives in its own file.
#include <iostream>
#include <string>
#include <vector>

#include "cleanup_command.h"
#include "config_maps_command.h"
#include "explain_command.h"
#include "gpuscale/core/subcommands.h"
#include "plan_command.h"
#include "policy_command.h"
#include "preflight_command.h"
#include "run_command.h"

int main(int argc, char** argv) {
  namespace reconciler = gpuscale::reconciler;
  const gpuscale::core::Program program{
      "gpuscale-reconciler",
      {
          {"run",
           "the controller: watch HPAs and grow their GPU partitions (run --policy FILE)",
           {reconciler::runRunCommand, reconciler::runFlagReference}},
          {"plan", "plan offline from a kubectl dump (plan --from DUMP.json [--policy FILE])",
           reconciler::planCommand()},
          {"explain", "why an HPA was (not) raised (explain NAMESPACE/NAME)",
           reconciler::explainCommand()},
          {"cleanup",
           "the off-ramp: undo what the reconciler did (run it once the controller is stopped)",
           reconciler::cleanupCommand()},
          {"configmaps",
           "before pointing the ClusterPolicy at them: create the reconciler's ConfigMaps from the "
           "current ones (configmaps init)",
           reconciler::configMapsCommand()},
          {"preflight",
           "before --mode=act: is the cluster ready for it (permissions, GPU Operator)",
           reconciler::preflightCommand()},
          {"policy",
           "the policy file reference, or check a policy file (policy check FILE)",
           {reconciler::runPolicyCommand, nullptr}},
      }};
  return gpuscale::core::runProgram(program, std::vector<std::string>(argv + 1, argv + argc),
                                    std::cout, std::cerr);
}
