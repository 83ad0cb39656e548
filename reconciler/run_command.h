// `gpuscale-reconciler run`: the live controller (flags in runUsage()).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuscale::reconciler {

std::string runUsage();
// The command's part of the flag reference (core::FlagSet::markdown).
std::string runFlagReference();

// Runs until SIGTERM/SIGINT (exit 0) or lost leadership (exit 1). Exit 2 on bad flags, an
// unreadable kubeconfig or a policy file that does not parse; --help prints runUsage() on `out`.
int runRunCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpuscale::reconciler
