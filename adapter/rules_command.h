// `gpuscale-adapter rules check|render`: offline tools for rule files.
//
//   rules check FILE
//     Loads and validates FILE exactly as the adapter does at start. Exit 0 and one summary line
//     per rule on stdout (warnings, such as the `$1_per_second` trap, on stderr as FILE:LINE:COL:
//     warning: …); exit 2 and `FILE:LINE:COL: PATH: message` on stderr for the first error.
//   rules render FILE --metric NAME (--resource RES | --external) [--namespace NS] [--names
//   a,b,...]
//                [--series SERIES] [--metric-selector SEL]
//     Prints exactly the PromQL the adapter would send for that request. The rule is the last one
//     (as in discovery, where the last writer wins) that names SERIES as NAME and can label RES;
//     without --series the series name is guessed from the rule (a literal name.matches, the
//     seriesQuery's metric name, or NAME itself). Exit 2 with a message on any error.
//
// Resources are resolved with the built-in resource table (no cluster needed).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuscale::adapter {

// `args` are the words after "rules". Returns the process exit code.
int runRulesCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `rules render`'s part of the flag reference (core::FlagSet::markdown).
std::string renderFlagReference();

}  // namespace gpuscale::adapter
