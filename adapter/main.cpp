// gpuscale-adapter: the custom/external metrics adapter. This file only dispatches subcommands;
// each subcommand lives in its own file. Without a subcommand (flags only, as prometheus-adapter is
// started) the adapter serves.
#include <array>
#include <iostream>
#include <span>
#include <string_view>
#include <vector>

#include "explain_command.h"
#include "gpuscale/core/version.h"
#include "rules_command.h"
#include "serve_command.h"

namespace {

using Run = int (*)(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  Run run;
};

constexpr std::array kSubcommands = {
    Subcommand{"serve", "serve the metrics APIs (the default: gpuscale-adapter --config FILE ...)",
               &gpuscale::adapter::runServeCommand},
    Subcommand{"explain",
               "why a metric is (not) served (explain --config FILE --prometheus-url URL ...)",
               &gpuscale::adapter::runExplainCommand},
    Subcommand{"rules", "check or render a rule file (rules check FILE | rules render FILE ...)",
               &gpuscale::adapter::runRulesCommand},
};

int usage(std::ostream& out, int code) {
  out << "usage: gpuscale-adapter [<command>] [arguments]\n\ncommands:\n";
  for (const Subcommand& command : kSubcommands) {
    out << "  " << command.name << "\t" << command.summary << "\n";
  }
  out << "\n'gpuscale-adapter serve --help' lists the serving flags.\n"
      << "'gpuscale-adapter --version' prints the version.\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  // prometheus-adapter's Helm chart passes that image's binary path as the first argument; a
  // chart's `args` carried over unchanged must still start the adapter.
  if (!args.empty() && args.front() == "/adapter") {
    std::cerr << "W argument \"/adapter\" is ignored (prometheus-adapter's binary path)\n";
    args.erase(args.begin());
  }
  if (args.empty()) return usage(std::cerr, 2);
  if (args.front() == "-h" || args.front() == "--help" || args.front() == "help") {
    return usage(std::cout, 0);
  }
  if (args.front() == "--version" || args.front() == "version") {
    gpuscale::core::printVersion(std::cout, "gpuscale-adapter");
    return 0;
  }
  for (const Subcommand& command : kSubcommands) {
    if (args.front() == command.name) {
      return command.run(std::span<const std::string_view>(args).subspan(1), std::cout, std::cerr);
    }
  }
  if (args.front().starts_with("-")) {
    return gpuscale::adapter::runServeCommand(args, std::cout, std::cerr);
  }
  std::cerr << "gpuscale-adapter: unknown command \"" << args.front() << "\"\n";
  return usage(std::cerr, 2);
}
