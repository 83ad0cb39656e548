// gpuscale-adapter: the custom/external metrics adapter. This file only dispatches subcommands;
// each subcommand lives in its own file. Without a subcommand (flags only, as prometheus-adapter is
// started) the adapter serves.
#include <iostream>
#include <string>
#include <vector>

#include "explain_command.h"
#include "gpuscale/adapter/serve_options.h"
#include "gpuscale/core/subcommands.h"
#include "rules_command.h"
#include "serve_command.h"

int main(int argc, char** argv) {
  namespace adapter = gpuscale::adapter;
  std::vector<std::string> args(argv + 1, argv + argc);
  // prometheus-adapter's Helm chart passes that image's binary path as the first argument; a
  // chart's `args` carried over unchanged must still start the adapter.
  if (!args.empty() && args.front() == "/adapter") {
    std::cerr << "W argument \"/adapter\" is ignored (prometheus-adapter's binary path)\n";
    args.erase(args.begin());
  }
  gpuscale::core::Program program{
      "gpuscale-adapter",
      {
          {"serve",
           "serve the metrics APIs (the default: gpuscale-adapter --config FILE ...)",
           {adapter::runServeCommand,
            [] {
              adapter::ServeOptions options;
              return adapter::serveFlagSet(options).markdown();
            }}},
          {"explain",
           "why a metric is (not) served (explain --config FILE --prometheus-url URL ...)",
           adapter::explainCommand()},
          {"rules",
           "check or render a rule file (rules check FILE | rules render FILE ...)",
           {adapter::runRulesCommand, adapter::renderFlagReference}},
      }};
  program.byDefault = &program.commands.front();
  return gpuscale::core::runProgram(program, args, std::cout, std::cerr);
}
