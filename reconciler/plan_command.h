// `gpuscale-reconciler plan`: plans offline from a `kubectl get ... -o json` dump and prints the
// plan.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuscale::reconciler {

// Runs the subcommand with its arguments (after "plan"). Writes the plan to `out`, errors to `err`.
// Returns the exit code: 0 on success, 2 on bad usage or a malformed dump or policy.
int runPlanCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpuscale::reconciler
