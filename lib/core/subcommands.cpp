#include "gpuscale/core/subcommands.h"

#include <ostream>

#include "gpuscale/core/flag_set.h"

namespace gpuscale::core {
namespace {

int commandList(const Program& program, std::ostream& out, int code) {
  out << "usage: " << program.name << (program.byDefault != nullptr ? " [<command>]" : " <command>")
      << " [arguments]\n\ncommands:\n";
  for (const Subcommand& command : program.commands) {
    out << "  " << command.name << "\t" << command.summary << "\n";
  }
  out << "  flags\tthe flag reference of every command (flags --markdown)\n";
  out << "\n'" << program.name << " <command> --help' lists the flags of a command.\n";
  return code;
}

}  // namespace

int runProgram(const Program& program, const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err) {
  if (args.empty()) return commandList(program, err, 2);
  const std::string& first = args.front();
  if (first == "-h" || first == "--help" || first == "help") return commandList(program, out, 0);
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const Subcommand& command : program.commands) {
    if (first == command.name) return command.run(rest, out, err);
  }
  if (first == "flags") {
    std::vector<std::string> references;
    for (const Subcommand& command : program.commands) {
      if (command.flagReference) references.push_back(command.flagReference());
    }
    return runFlagsCommand(program.name, rest, references, out, err);
  }
  if (program.byDefault != nullptr && first.starts_with("-")) {
    return program.byDefault->run(args, out, err);
  }
  err << program.name << ": unknown command \"" << first << "\"\n";
  return commandList(program, err, 2);
}

}  // namespace gpuscale::core
