// A rules file with one custom rule for tests: `series` per pod and per namespace (resource
// overrides), summed by the requested objects. The text ends with the rule, so tests append
// further items to its `rules:` list or further sections.
#pragma once

#include <string>

namespace gpuscale::testing {

inline std::string podSumRules(const std::string& series) {
  return R"(rules:
- seriesQuery: ')" +
         series + R"({namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
)";
}

}  // namespace gpuscale::testing
