// Helpers for adapter unit tests: compile a rule file from text and build registries from canned
// discovery results, with the built-in resource table.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gpuscale/adapter/relister.h"
#include "gpuscale/prom/types.h"
#include "gpuscale/rules/loader.h"
#include "gpuscale/rules/registry.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter::testing {

inline std::shared_ptr<const rules::RuleSet> compile(const std::string& yaml) {
  auto config = rules::parseRuleConfig(yaml, "test.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  auto compiled = rules::compileRules(*config, rules::BuiltinResourceTable::instance());
  EXPECT_TRUE(compiled.ok()) << compiled.status().message();
  return *compiled;
}

// A snapshot whose registries were built from `series` (seriesQuery -> series).
inline std::shared_ptr<const DiscoverySnapshot> snapshotOf(
    const std::shared_ptr<const rules::RuleSet>& ruleSet, const rules::SeriesByQuery& series) {
  auto snapshot = std::make_shared<DiscoverySnapshot>();
  auto custom = rules::CustomRegistry::build(ruleSet, series);
  auto external = rules::ExternalRegistry::build(ruleSet, series);
  EXPECT_TRUE(custom.ok()) << custom.status().message();
  EXPECT_TRUE(external.ok()) << external.status().message();
  snapshot->custom = *custom;
  snapshot->external = *external;
  return snapshot;
}

inline prom::Sample sample(prom::Labels labels, double value, int64_t unixSeconds = 1714557600) {
  return prom::Sample{std::move(labels),
                      prom::Point{prom::Timestamp(std::chrono::seconds(unixSeconds)), value}};
}

}  // namespace gpuscale::adapter::testing
