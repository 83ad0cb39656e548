// Helpers for adapter unit tests: compile a rule file from text and build registries from canned
// discovery results, with the built-in resource table; canned query answers and the check of a
// failed request.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gpuscale/adapter/relister.h"
#include "gpuscale/prom/client.h"
#include "gpuscale/prom/types.h"
#include "gpuscale/rules/loader.h"
#include "gpuscale/rules/registry.h"
#include "gpuscale/rules/rule_set.h"
#include "support/pod_rules.h"

namespace gpuscale::adapter::testing {

// One custom rule: `http_requests` per pod and namespace (see support/pod_rules.h).
inline const std::string kHttpRequestsRules = gpuscale::testing::podSumRules("http_requests");

inline std::shared_ptr<const rules::RuleSet> compile(const std::string& yaml) {
  auto config = rules::parseRuleConfig(yaml, "test.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  auto compiled = rules::compileRules(*config, k8s::BuiltinResourceTable::instance());
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

// The API names ("pods/http_requests") of `snapshot`'s custom metrics, in the registry's order.
inline std::vector<std::string> customMetricNames(const DiscoverySnapshot& snapshot) {
  std::vector<std::string> out;
  for (const auto& entry : snapshot.custom->entries()) out.push_back(entry.info.apiName());
  return out;
}

inline prom::Sample sample(prom::Labels labels, double value, int64_t unixSeconds = 1714557600) {
  return prom::Sample{std::move(labels),
                      prom::Point{prom::Timestamp(std::chrono::seconds(unixSeconds)), value}};
}

// A query answer: a vector of `samples`.
inline prom::Result<prom::QueryResultPtr> vectorAnswer(std::vector<prom::Sample> samples) {
  auto result = std::make_shared<prom::QueryResult>();
  result->vector = std::move(samples);
  return prom::QueryResultPtr(result);
}

// A query answer of `type` that holds no data (a matrix where a vector is expected, ...).
inline prom::QueryResultPtr emptyAnswer(prom::ResultType type) {
  auto result = std::make_shared<prom::QueryResult>();
  result->type = type;
  return result;
}

// `result` failed with HTTP `code` and a message that contains `message`.
template <typename T>
void expectFailure(const core::Result<T>& result, int code, const std::string& message) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().httpCode(), code);
  EXPECT_NE(result.status().message().find(message), std::string::npos)
      << result.status().message();
}

}  // namespace gpuscale::adapter::testing
