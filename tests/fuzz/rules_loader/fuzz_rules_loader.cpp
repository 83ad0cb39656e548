// Fuzzes rule files end to end: YAML loading, validation and compilation, then discovery over a few
// series and rendering one query per rule. Every input must give a value or an error value, never a
// crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/rules/loader.h"
#include "gpuscale/rules/registry.h"
#include "gpuscale/rules/rule_set.h"

namespace rules = gpuscale::rules;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = rules::parseRuleConfig(text, "fuzz.yaml");
  if (!config.ok()) return 0;
  auto set = rules::compileRules(*config, gpuscale::k8s::BuiltinResourceTable::instance());
  if (!set.ok()) return 0;
  rules::SeriesByQuery series;
  for (rules::RuleKind kind : {rules::RuleKind::kCustom, rules::RuleKind::kExternal}) {
    for (const std::string& query : (*set)->seriesQueries(kind)) {
      series[query] = {{"http_requests_total", {"namespace", "pod", "job"}},
                       {"node_temp_celsius", {"node", "instance"}},
                       {query, {"service", "deployment"}}};
    }
  }
  auto custom = rules::CustomRegistry::build(*set, series);
  if (custom.ok()) {
    const std::vector<std::string> names = {"a", "b.c"};
    for (const rules::CustomEntry& entry : (*custom)->entries()) {
      rules::QueryRequest request{entry.seriesName,
                                  entry.info.resource,
                                  entry.info.namespaced ? "ns" : "",
                                  names,
                                  nullptr,
                                  {}};
      (void)entry.rule->queryFor(request);
    }
  }
  auto external = rules::ExternalRegistry::build(*set, series);
  if (external.ok()) {
    for (const rules::ExternalEntry& entry : (*external)->entries()) {
      (void)entry.rule->externalQueryFor(entry.seriesName, "ns", nullptr);
    }
  }
  return 0;
}
