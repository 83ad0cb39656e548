// Splitting a command line into flags for the option groups that share it (serving, delegation,
// Prometheus, ...): each group offers its flags to one function, and what it does not know is
// passed on, in order, to the next group.
//
// Thread safety: pure function (the callbacks are called on the calling thread).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"

namespace gpuscale::core {

// What a flag group says of one flag.
struct FlagCallbacks {
  // Sets the option of `--name` from `value`: true when `name` is one of the group's flags, false
  // when it is not (it is passed on), an error value when the value is bad.
  std::function<Result<bool>(std::string_view name, std::string_view value)> apply;
  // True for flags that take no argument (`--name` means "true"; `--name=value` still works).
  std::function<bool(std::string_view name)> isBoolean = [](std::string_view) { return false; };
  // True for the group's flags that a later group reads too: they are applied and passed on.
  std::function<bool(std::string_view name)> passOn = [](std::string_view) { return false; };
};

// Offers every `--name=value`, `--name value` and boolean `--name` in `args` to `flags.apply`.
// Returns the arguments it did not claim (positional arguments, unknown flags as written, and the
// passOn flags), in order. A claimed flag without its argument is a 400 "flag needs an argument".
// A flag the group does not know is passed on alone: a following value is then seen as positional.
Result<std::vector<std::string>> applyFlags(const std::vector<std::string>& args,
                                            const FlagCallbacks& flags);

}  // namespace gpuscale::core
