// `gpuscale-reconciler policy`: the policy file's reference (`policy reference`, what
// docs/generated/policy.md holds) and a check of a policy file (`policy check FILE`: the errors
// with their positions, the deprecated spellings, the policies it defines), both from the parser
// in lib/partition.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuscale::reconciler {

// Runs the subcommand with its arguments (after "policy"). Returns the exit code: 0, 1 for an
// invalid policy file, 2 for bad usage.
int runPolicyCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpuscale::reconciler
