// `gpuscale-reconciler plan`: plans offline from a `kubectl get ... -o json` dump and prints the
// plan.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/subcommands.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::reconciler {

// What `plan` runs and its part of the flag reference: writes the plan to `out`, errors to `err`;
// exits 0 on success, 2 on bad usage or a malformed dump or policy.
core::CommandHandler planCommand();

// Shared with `explain`: the text of `path` ("-" = stdin), false with a message on `err` when it
// cannot be read; the policies of `path` ("" = the built-in "default"), nullopt with a message
// when the file cannot be read or is invalid.
bool readInput(const std::string& path, std::string& text, std::ostream& err);
std::optional<partition::PolicySet> loadPolicies(const std::string& path, std::ostream& err);
// Declares -o/--output (json|text) and --now (RFC 3339; nullopt: the current time), as plan and
// explain take them.
void addOutputFlag(core::FlagSet& flags, std::string* output);
void addNowFlag(core::FlagSet& flags, std::optional<partition::TimePoint>* now);
// Declares --policy (alias --config, deprecated), the partition policy file, bound to `path`;
// `withoutIt` says in its help what happens when it is not given (plan and run differ).
void addPolicyFileFlag(core::FlagSet& flags, std::string* path, std::string_view withoutIt);

}  // namespace gpuscale::reconciler
