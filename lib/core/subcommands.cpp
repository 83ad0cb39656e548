#include "gpuscale/core/subcommands.h"

#include <ostream>

#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/version.h"

namespace gpuscale::core {
namespace {

int commandList(const Program& program, std::ostream& out, int code) {
  out << "usage: " << program.name << (program.byDefault != nullptr ? " [<command>]" : " <command>")
      << " [arguments]\n\ncommands:\n";
  for (const Subcommand& command : program.commands) {
    out << "  " << command.name << "\t" << command.summary << "\n";
  }
  out << "  flags\tthe flag reference of every command (flags --markdown)\n";
  out << "\n'" << program.name << " <command> --help' lists the flags of a command; '"
      << program.name << " --version' prints the version.\n";
  return code;
}

// The flags of the program itself, given instead of a command.
struct ProgramFlags {
  bool version = false;

  void addFlags(FlagSet& flags) {
    flags.addBool("version", &version, "print the program's name and version, and exit");
  }
};

FlagSet programFlagSet(const Program& program, ProgramFlags& options) {
  FlagSet flags(program.name, program.name + " --version",
                "Flags of the program itself, given instead of a command.");
  options.addFlags(flags);
  return flags;
}

}  // namespace

int runProgram(const Program& program, const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err) {
  if (args.empty()) return commandList(program, err, 2);
  const std::string& first = args.front();
  if (first == "-h" || first == "--help" || first == "help") return commandList(program, out, 0);
  if (first == "version" || first == "--version" || first.starts_with("--version=")) {
    ProgramFlags options;
    FlagSet flags = programFlagSet(program, options);
    if (first == "version") {
      options.version = true;
    } else if (auto code = flags.parseCommand(args, out, err)) {
      return *code;
    }
    if (options.version) printVersion(out, program.name);
    return 0;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const Subcommand& command : program.commands) {
    if (first == command.name) return command.handler.run(rest, out, err);
  }
  if (first == "flags") {
    std::vector<std::string> references;
    ProgramFlags options;
    references.push_back(programFlagSet(program, options).markdown());
    for (const Subcommand& command : program.commands) {
      if (command.handler.flagReference) references.push_back(command.handler.flagReference());
    }
    return runFlagsCommand(program.name, rest, references, out, err);
  }
  if (program.byDefault != nullptr && first.starts_with("-")) {
    return program.byDefault->handler.run(args, out, err);
  }
  err << program.name << ": unknown command \"" << first << "\"\n";
  return commandList(program, err, 2);
}

}  // namespace gpuscale::core
