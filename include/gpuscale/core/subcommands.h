// Subcommands: the command table of a program's main (`gpuscale-adapter serve ...`,
// `gpuscale-reconciler plan ...`): which word runs which command, the list `--help` prints, and
// the `flags --markdown` command that prints the flag reference of every command.
//
// Thread safety: run on the main thread.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale::core {

struct Subcommand {
  std::string name;
  std::string summary;  // one line for the command list
  // The words after the name; returns the exit code.
  std::function<int(const std::vector<std::string>& args, std::ostream& out, std::ostream& err)>
      run;
  // The command's part of the flag reference (FlagSet::markdown()); null for commands without
  // flags.
  std::function<std::string()> flagReference;
};

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
