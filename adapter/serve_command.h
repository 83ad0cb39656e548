// `gpuscale-adapter [serve] --config FILE [flags]`: the adapter server (the default when no
// subcommand is given, as prometheus-adapter takes flags only).
//
// Start-up: parse the flags (serve_options.h; a bad or unknown flag prints the error and the usage,
// exit 2; prometheus-adapter's removed klog flags are accepted with a warning), load the rule file
// and build its backends through the ConfigReloader (an error prints FILE:LINE:COL: PATH: message,
// exit 2; warnings are logged), start serving at once (discovery documents are answered from an
// empty registry until the first relist), then start discovery and the rule-file watcher (changes
// and SIGHUP reload the rules; an invalid file keeps the old ones). Readiness (`/readyz`) waits for
// the first discovery. SIGTERM/SIGINT: readyz fails, in-flight requests finish, the relister
// stops, exit 0.
//
// Without --standalone the adapter runs as an aggregated API server: objects are resolved through
// Kubernetes informers (--lister-kubeconfig, default in-cluster), requests are authenticated and
// authorized by delegation to kube-apiserver (TokenReview, SubjectAccessReview, the
// extension-apiserver-authentication ConfigMap), and the TLS listener follows the client CAs and
// serving certificate as they rotate. With --standalone, authentication is off (a warning is
// logged), objects come from Prometheus label values and the server binds to loopback by default.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuscale::adapter {

// `args` are the words after the program name (or after "serve"). Returns the process exit code.
int runServeCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpuscale::adapter
