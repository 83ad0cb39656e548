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

#include "gpuscale/core/subcommands.h"

namespace gpuscale::adapter {

// What `explain` runs, and its part of the flag reference, for the program's command table.
core::CommandHandler explainCommand();

}  // namespace gpuscale::adapter
