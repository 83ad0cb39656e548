// Subcommands: the command table of a program's main (`gpuscale-adapter serve ...`,
// `gpuscale-reconciler plan ...`): which word runs which command, the list `--help` prints, and
// the `flags --markdown` command that prints the flag reference of every command; the exit codes
// commands end with, and flagCommand(), which makes the handler of a command that takes flags (and
// positional words, where it says so): parsing, --help and its flag reference from one declaration.
//
// Thread safety: run on the main thread.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/flag_set.h"

namespace gpuscale::core {

// The exit codes every command ends with: it ran and all is well (a check passed, nothing left
// over); it ran and something is not (a check or a write failed, leftovers); it could not run (a
// usage error, as FlagSet::usageError() returns, or input or a cluster it could not read).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitError = 2;

// What a command does, apart from its name: the command files make it, the program's table names
// it.
struct CommandHandler {
  // The words after the name; returns the exit code.
  std::function<int(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)>
      run;
  // The command's part of the flag reference (FlagSet::markdown()); null for commands without
  // flags.
  std::function<std::string()> flagReference;
};

struct Subcommand {
  std::string name;
  std::string summary;  // one line for the command list
  CommandHandler handler;
};

// The body of a command whose flags bind to the fields of an Args: runs with the parsed values and
// the FlagSet (for usageError()); returns the exit code.
template <typename Args>
using FlagCommandBody = int (*)(Args& args, const FlagSet& flags, std::ostream& out,
                                std::ostream& err);
// The same for a command that also takes positional words: `words` are the ones left after the
// flags (`configmaps init`, `explain NAMESPACE/NAME`), for the body to check.
template <typename Args>
using FlagWordsCommandBody = int (*)(Args& args, const std::vector<std::string>& words,
                                     const FlagSet& flags, std::ostream& out, std::ostream& err);

namespace detail {
template <typename Args, typename Body>
CommandHandler flagCommandOf(FlagSet (*declare)(Args&), bool takesWords, Body body) {
  auto run = [declare, takesWords, body](const std::vector<std::string>& args, std::ostream& out,
                                         std::ostream& err) {
    Args parsed;
    FlagSet flags = declare(parsed);
    std::vector<std::string> words;
    if (auto exitCode = flags.parseCommand(args, out, err, takesWords ? &words : nullptr)) {
      return *exitCode;
    }
    return body(parsed, words, flags, out, err);
  };
  return {run, [declare] { return markdownOf(declare); }};
}
}  // namespace detail

// The handler of a command that takes flags and no positional words, from the function that
// declares its flags (the one markdownOf() takes, so parsing and the flag reference share one
// declaration): run parses the words into a fresh Args (`--help`, flag errors and positional words
// end there, with parseCommand()'s exit code) and then returns `body`'s; flagReference is
// markdownOf(declare).
template <typename Args>
CommandHandler flagCommand(FlagSet (*declare)(Args&), FlagCommandBody<Args> body) {
  return detail::flagCommandOf(
      declare, false,
      [body](Args& args, const std::vector<std::string>&, const FlagSet& flags, std::ostream& out,
             std::ostream& err) { return body(args, flags, out, err); });
}

// The same for a command that also takes positional words: `body` gets them.
template <typename Args>
CommandHandler flagCommand(FlagSet (*declare)(Args&), FlagWordsCommandBody<Args> body) {
  return detail::flagCommandOf(declare, true, body);
}

struct Program {
  std::string name;  // "gpuscale-adapter"
  std::vector<Subcommand> commands;
  // Runs when the first word is a flag (prometheus-adapter is started with flags only); null: a
  // command is required.
  const Subcommand* byDefault = nullptr;
};

// Runs the command `args[0]` names with the words after it. `-h`, `--help` and `help` print the
// command list on `out` (exit 0); `--version` (a flag of the program's own FlagSet, also the word
// `version`) prints "PROGRAM VERSION" (version.h); `flags --markdown` prints the flag reference of
// the program's own flags and of every command (flagReference in flag_set.h); no word or an unknown
// one prints the list on `err` (exit 2).
int runProgram(const Program& program, const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err);

}  // namespace gpuscale::core
