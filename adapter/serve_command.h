// `gpuscale-adapter [serve] --config FILE [flags]`: the adapter server (the default when no
// subcommand is given, as prometheus-adapter takes flags only).
//
// Start-up: parse the flags (serve_options.h; a bad or unknown flag prints the error and the usage,
// exit 2), load and compile the rule file (an error prints FILE:LINE:COL: PATH: message, exit 2;
// warnings are logged), build the Prometheus client (HTTP → instrumentation → cache), start serving
// at once (discovery documents are answered from an empty registry until the first relist), then
// start the relister. Readiness (`/readyz`) waits for the first discovery. SIGTERM/SIGINT: readyz
// fails, in-flight requests finish, the relister stops, exit 0.
//
// Without --standalone the adapter needs the Kubernetes client (object lists through informers,
// delegated authentication), which is not built in yet: the command says so and exits 2.
#pragma once

#include <iosfwd>
#include <span>
#include <string_view>

namespace gpuscale::adapter {

// `args` are the words after the program name (or after "serve"). Returns the process exit code.
int runServeCommand(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace gpuscale::adapter
