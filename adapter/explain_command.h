// `gpuscale-adapter explain`: why a metric is (not) served, from the rule file and a live
// Prometheus, without a cluster.
//
//   explain --config FILE --prometheus-url URL [--metric M] [--namespace NS] [--rule PATH]
//           [--metrics-max-age D] [--no-sample] [-o text|json] [--prometheus-* flags of serve]
//
// Loads FILE as the adapter does, runs discovery for each seriesQuery, and prints the per-rule
// explanation of explain.h: text (default) or JSON. Exit 0 when the explanation was printed (even
// when Prometheus failed: the failure is part of the answer); exit 2 with a message for a bad flag
// or rule file.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuscale::adapter {

// `args` are the words after "explain". Returns the process exit code.
int runExplainCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// The command's part of the flag reference (core::FlagSet::markdown).
std::string explainFlagReference();

}  // namespace gpuscale::adapter
