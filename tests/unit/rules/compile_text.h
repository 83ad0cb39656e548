// Helpers for rules unit tests: compile a rule file given as text with the built-in resource table,
// and check a rendered query against what a table row expects.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/rules/loader.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::rules {

// The compiled rules, or null after failing the calling test with the loader's message.
inline std::shared_ptr<const RuleSet> compileText(const std::string& yaml) {
  core::Result<RuleConfig> config = parseRuleConfig(yaml, "t.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  if (!config) return nullptr;
  core::Result<std::shared_ptr<const RuleSet>> set =
      compileRules(*config, k8s::BuiltinResourceTable::instance());
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? *set : nullptr;
}

// `query` succeeded exactly when `ok`; then it is `expected`, else its message contains `expected`.
inline void expectQuery(const core::Result<std::string>& query, bool ok, const char* expected) {
  ASSERT_EQ(query.ok(), ok) << (query.ok() ? *query : query.status().message());
  if (ok) {
    EXPECT_EQ(*query, expected);
  } else {
    EXPECT_NE(query.status().message().find(expected), std::string::npos)
        << query.status().message();
  }
}

}  // namespace gpuscale::rules
