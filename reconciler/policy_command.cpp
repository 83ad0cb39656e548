#include "policy_command.h"

#include <ostream>

#include "gpuscale/core/flag_set.h"
#include "gpuscale/partition/policy.h"
#include "plan_command.h"

namespace gpuscale::reconciler {

int runPolicyCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  core::FlagSet flags("gpuscale-reconciler policy",
                      "gpuscale-reconciler policy reference | policy check FILE",
                      "reference: print the policy file reference (markdown). check: parse FILE "
                      "(\"-\" for stdin) as the reconciler does, print its errors or deprecated "
                      "spellings and the policies it defines.");
  std::vector<std::string> words;
  if (auto code = flags.parseCommand(args, out, err, &words)) return *code;
  if (words == std::vector<std::string>{"reference"}) {
    out << partition::policyReference("gpuscale-reconciler policy reference");
    return 0;
  }
  if (words.size() != 2 || words[0] != "check") {
    return flags.usageError(err, "expected `reference` or `check FILE`");
  }
  auto policies = loadPolicies(words[1], err);
  if (!policies) return 1;
  out << words[1] << ": " << policies->policies.size() << " polic"
      << (policies->policies.size() == 1 ? "y" : "ies") << ":";
  for (const auto& policy : policies->policies) out << " " << policy.name;
  out << "\n";
  return 0;
}

}  // namespace gpuscale::reconciler
