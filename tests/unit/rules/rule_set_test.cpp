#include "gpuscale/rules/rule_set.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/rules/loader.h"

namespace gpuscale::rules {
namespace rule_set_test {

core::Result<std::shared_ptr<const RuleSet>> compileText(const std::string& yaml) {
  core::Result<RuleConfig> config = parseRuleConfig(yaml, "t.yaml");
  if (!config) return config.status();
  return compileRules(*config, k8s::BuiltinResourceTable::instance());
}

struct ErrorRow {
  const char* what;
  const char* yaml;
  const char* message;  // exact
};

// every startup validation, with its position.
const ErrorRow kErrorRows[] = {
    {"filter with both is and isNot",
     "rules:\n- seriesQuery: up\n  seriesFilters:\n  - is: a\n    isNot: b\n",
     "t.yaml:4:5: rules[0].seriesFilters[0]: cannot have both an 'is' (\"a\") and 'isNot' (\"b\") "
     "expression in a single filter"},
    {"filter with neither", "rules:\n- seriesQuery: up\n  seriesFilters:\n  - {}\n",
     "t.yaml:4:5: rules[0].seriesFilters[0]: must have either an 'is' or 'isNot' expression in a "
     "filter"},
    {"filter with an empty is", "rules:\n- seriesQuery: up\n  seriesFilters:\n  - is: \"\"\n",
     "t.yaml:4:5: rules[0].seriesFilters[0]: must have either an 'is' or 'isNot' expression in a "
     "filter"},
    {"bad filter regex", "rules:\n- seriesQuery: up\n  seriesFilters:\n  - isNot: \"(a\"\n",
     "t.yaml:4:12: rules[0].seriesFilters[0].isNot: unable to compile series filter: error parsing "
     "regexp \"(a\": missing ): (a"},
    {"bad name regex", "rules:\n- seriesQuery: up\n  name:\n    matches: \"a**\"\n",
     "t.yaml:4:14: rules[0].name.matches: unable to compile series name match expression: error "
     "parsing regexp \"a**\": bad repetition operator: **"},
    {"two capture groups and no as",
     "rules:\n- seriesQuery: up\n  name: {matches: \"^(a)_(b)$\"}\n",
     "t.yaml:3:19: rules[0].name.matches: must specify an 'as' value for name matcher "
     "\"^(a)_(b)$\" (it "
     "has 2 capture groups) associated with series query \"up\""},
    {"metricsQuery that does not parse points inside the template",
     "rules:\n- seriesQuery: up\n  metricsQuery: 'sum(<<.Series)'\n",
     "t.yaml:3:31: rules[0].metricsQuery: unable to parse template: template: offset 13: "
     "unexpected "
     "\")\" in operand"},
    {"metricsQuery with an unknown function",
     "rules:\n- seriesQuery: up\n  metricsQuery: <<printf .Series>>\n",
     "t.yaml:3:19: rules[0].metricsQuery: unable to parse template: template: offset 2: function "
     "\"printf\" not defined"},
    {"metricsQuery in a block scalar points at the value",
     "rules:\n- seriesQuery: up\n  metricsQuery: |\n    sum(\n      <<.Series)\n",
     "t.yaml:3:17: rules[0].metricsQuery: unable to parse template: template: offset 16: "
     "unexpected \")\" in operand"},
    {"resource template without <<.Resource>>",
     "rules:\n- seriesQuery: up\n  resources: {template: \"kube_<<.Group>>\"}\n",
     "t.yaml:3:26: rules[0].resources.template: must include at least '<<.Resource>>' in the label "
     "template"},
    {"resource template that does not parse",
     "rules:\n- seriesQuery: up\n  resources: {template: \"kube_<<.Resource\"}\n",
     "t.yaml:3:31: rules[0].resources.template: template: offset 5: unclosed action"},
    {"unknown override resource (sample-config's cheese.io brand needs a cluster that has it)",
     "rules:\n- seriesQuery: up\n  resources:\n    overrides:\n      brand: {group: cheese.io, "
     "resource: brand}\n",
     "t.yaml:5:43: rules[0].resources.overrides.brand: unable to normalize group-resource "
     "{cheese.io "
     "brand}: the server doesn't have a resource type \"brand\" in group \"cheese.io\""},
    {"external rule errors name externalRules",
     "externalRules:\n- seriesQuery: up\n  seriesFilters: [{}]\n",
     "t.yaml:3:19: externalRules[0].seriesFilters[0]: must have either an 'is' or 'isNot' "
     "expression "
     "in a filter"},
    {"bad window", "resourceRules:\n  window: 5 minutes\n",
     "t.yaml:2:11: resourceRules.window: invalid duration: "},
    {"bad containerQuery", "resourceRules:\n  cpu:\n    containerQuery: <<.Series\n",
     "t.yaml:3:21: resourceRules.cpu.containerQuery: unable to parse template: template: offset 0: "
     "unclosed action"},
    {"a rule names an undeclared backend (third rule)",
     "backends:\n- {name: thanos, url: 'http://t'}\nrules:\n- seriesQuery: a\n- seriesQuery: b\n"
     "  backend: thanos\n- seriesQuery: c\n  backend: mimir\n",
     "t.yaml:8:12: rules[2].backend: unknown backend \"mimir\" (declared: default, thanos)"},
    {"an external rule names a backend and none is declared",
     "externalRules:\n- seriesQuery: a\n  backend: thanos\n",
     "t.yaml:3:12: externalRules[0].backend: unknown backend \"thanos\" (declared: default)"},
    {"an invalid backend stops compilation",
     "backends:\n- {name: Thanos, url: 'http://t'}\nrules:\n- seriesQuery: a\n",
     "t.yaml:2:10: backends[0].name: backend name \"Thanos\" must be a DNS label (lower-case "
     "letters, digits and '-')"},
};

TEST(CompileRulesErrors, Table) {
  for (const ErrorRow& row : kErrorRows) {
    SCOPED_TRACE(row.what);
    core::Result<std::shared_ptr<const RuleSet>> set = compileText(row.yaml);
    ASSERT_FALSE(set.ok());
    const std::string message = set.status().message();
    std::string_view expected = row.message;
    if (expected.ends_with(": ")) {
      EXPECT_EQ(message.substr(0, expected.size()), expected);
    } else {
      EXPECT_EQ(message, expected);
    }
  }
}

struct WarningRow {
  const char* what;
  const char* yaml;
  std::vector<std::string> warnings;  // Diagnostic::format("t.yaml")
};

const WarningRow kWarningRows[] = {
    {"the $1_per_second trap",
     "rules:\n- seriesQuery: x\n  resources: {template: <<.Resource>>}\n  name: {matches: "
     "\"^(.*)_total$\", as: \"$1_per_second\"}\n  metricsQuery: <<.Series>>\n",
     {"t.yaml:4:40: rules[0].name.as: \"$1_per_second\" refers to capture group \"1_per_second\", "
      "which does not exist in \"^(.*)_total$\", so it expands to \"\" (write \"${1}_per_second\" "
      "for "
      "group 1 followed by \"_per_second\")"}},
    {"a group number past the last group",
     "rules:\n- seriesQuery: x\n  resources: {template: <<.Resource>>}\n  name: {matches: "
     "\"^(.*)$\", "
     "as: \"${2}\"}\n  metricsQuery: <<.Series>>\n",
     {"t.yaml:4:34: rules[0].name.as: \"${2}\" refers to capture group \"2\", which does not exist "
      "in "
      "\"^(.*)$\", so it expands to \"\""}},
    {"the LabelMatchersByName field from the docs does not exist",
     "rules:\n- seriesQuery: x\n  resources: {template: <<.Resource>>}\n  metricsQuery: "
     "'<<.LabelMatchersByName>>'\n",
     {"t.yaml:4:20: rules[0].metricsQuery: field .LabelMatchersByName does not exist (fields: "
      ".Series, "
      ".LabelMatchers, .LabelValuesByName, .GroupBy, .GroupBySlice); every query will fail"}},
    {"GroupBy in an external rule",
     "externalRules:\n- seriesQuery: x\n  resources: {namespaced: false}\n  metricsQuery: 'sum(x) "
     "by "
     "(<<.GroupBy>>)'\n",
     {"t.yaml:4:17: externalRules[0].metricsQuery: .GroupBy is always empty for externalRules "
      "(write "
      "the labels to group by yourself)"}},
    {"pod override only: no namespace label",
     "rules:\n- seriesQuery: x\n  resources: {overrides: {pod: {resource: pod}}}\n  metricsQuery: "
     "<<.Series>>\n",
     {"t.yaml:2:3: rules[0].resources: no label for namespaces (no override and no template): "
      "queries for namespaced objects will fail"}},
    {"node override only: nothing namespaced, no warning",
     "rules:\n- seriesQuery: x\n  resources: {overrides: {instance: {resource: node}}}\n  "
     "metricsQuery: "
     "<<.Series>>\n",
     {}},
    {"empty seriesQuery and metricsQuery",
     "rules:\n- resources: {template: <<.Resource>>}\n",
     {"t.yaml:2:3: rules[0].seriesQuery: empty seriesQuery: Prometheus rejects it and every relist "
      "will fail",
      "t.yaml:2:3: rules[0].metricsQuery: empty metricsQuery: every query will fail"}},
    {"a good rule has no warnings",
     "rules:\n- seriesQuery: x\n  resources: {template: <<.Resource>>}\n  name: {matches: "
     "\"^(.*)_total$\", as: \"${1}_per_second\"}\n  metricsQuery: <<.Series>>\n",
     {}},
};

TEST(CompileRulesWarnings, Table) {
  for (const WarningRow& row : kWarningRows) {
    SCOPED_TRACE(row.what);
    core::Result<std::shared_ptr<const RuleSet>> set = compileText(row.yaml);
    ASSERT_TRUE(set.ok()) << set.status().message();
    std::vector<std::string> warnings;
    for (const Diagnostic& d : (*set)->warnings) warnings.push_back(d.format("t.yaml"));
    EXPECT_EQ(warnings, row.warnings);
  }
}

TEST(CompileRules, DefaultsForAs) {
  core::Result<std::shared_ptr<const RuleSet>> set = compileText(
      "rules:\n- {seriesQuery: a, resources: {template: <<.Resource>>}, metricsQuery: x}\n"
      "- {seriesQuery: a, name: {matches: \"^(.*)_total$\"}, resources: {template: <<.Resource>>}, "
      "metricsQuery: x}\n"
      "- {seriesQuery: b, name: {matches: \"^(?P<x>.*)_total$\"}, resources: {template: "
      "<<.Resource>>}, metricsQuery: x}\n");
  ASSERT_TRUE(set.ok()) << set.status().message();
  const RuleSet& rules = **set;
  ASSERT_EQ(rules.rules.size(), 3u);
  EXPECT_EQ(rules.rules[0].nameAs(), "$0");
  EXPECT_EQ(rules.rules[0].nameRegex().pattern(), ".*");
  EXPECT_TRUE(rules.rules[0].filters().empty()) << "no implicit filter without name.matches";
  EXPECT_EQ(rules.rules[1].nameAs(), "$1");
  ASSERT_EQ(rules.rules[1].filters().size(), 1u);
  EXPECT_TRUE(rules.rules[1].filters()[0].implicit);
  EXPECT_EQ(rules.rules[1].filters()[0].path, "rules[1].name.matches");
  EXPECT_EQ(rules.rules[2].nameAs(), "$1");
  EXPECT_EQ(rules.seriesQueries(RuleKind::kCustom), (std::vector<std::string>{"a", "b"}));
}

TEST(CompileRules, FiltersAndNamingOfTheDefaultRules) {
  const char* source = std::getenv("GPUSCALE_SOURCE_DIR");
  ASSERT_NE(source, nullptr);
  core::Result<std::shared_ptr<const RuleSet>> set =
      loadRules(std::string(source) + "/rules/prometheus-adapter-defaults.yaml",
                k8s::BuiltinResourceTable::instance());
  ASSERT_TRUE(set.ok()) << set.status().message();
  const RuleSet& rules = **set;
  ASSERT_EQ(rules.rules.size(), 6u);
  EXPECT_TRUE(rules.warnings.empty());
  struct Row {
    const char* series;
    int rule;  // the rule that names it, -1: none
    const char* metric;
  };
  const Row rows[] = {
      {"container_cpu_usage_seconds_total", 0, "cpu_usage"},
      {"container_network_receive_bytes_total", 1, "network_receive_bytes"},
      {"container_memory_working_set_bytes", 2, "memory_working_set_bytes"},
      {"http_requests_in_flight", 3, "http_requests_in_flight"},
      {"http_requests_total", 4, "http_requests"},
      {"process_cpu_seconds_total", 5, "process_cpu"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.series);
    for (int i = 0; i < 6; ++i) {
      const CompiledRule& rule = rules.rules[static_cast<size_t>(i)];
      bool queryMatches = std::string_view(row.series).starts_with("container_") == (i < 3);
      bool passes = queryMatches && rule.firstFailingFilter(row.series) < 0;
      EXPECT_EQ(passes, i == row.rule) << "rule " << i;
      if (passes) {
        std::string metric;
        ASSERT_TRUE(rule.metricNameFor(row.series, metric));
        EXPECT_EQ(metric, row.metric);
      }
    }
  }
}

TEST(CompileRules, BackendsAndDiscoveryKeys) {
  // The same seriesQuery on two backends is two discovery calls; rules without `backend:` (and
  // `backend: default`) keep the seriesQuery itself as their key, as prometheus-adapter files do.
  auto set = compileText(
      "backends:\n- {name: thanos, url: 'http://t:9090', timeout: 3s, verb: POST}\n"
      "rules:\n- seriesQuery: up\n- seriesQuery: up\n  backend: thanos\n"
      "- seriesQuery: up\n  backend: default\n- seriesQuery: up\n  backend: thanos\n");
  ASSERT_TRUE(set.ok()) << set.status().message();
  ASSERT_EQ((*set)->backends.size(), 1u);
  EXPECT_EQ((*set)->backends[0].name, "thanos");
  EXPECT_EQ((*set)->backends[0].timeout, std::chrono::seconds(3));
  EXPECT_EQ((*set)->backends[0].post, true);
  const auto& rules = (*set)->rules;
  EXPECT_EQ(rules[0].backend(), "default");
  EXPECT_EQ(rules[0].discoveryKey(), "up");
  EXPECT_EQ(rules[1].backend(), "thanos");
  EXPECT_NE(rules[1].discoveryKey(), "up");
  EXPECT_EQ(rules[2].discoveryKey(), "up");
  EXPECT_EQ(rules[3].discoveryKey(), rules[1].discoveryKey());
  auto queries = (*set)->discoveryQueries(RuleKind::kCustom);
  ASSERT_EQ(queries.size(), 2u);
  EXPECT_EQ(queries[0].backend, "default");
  EXPECT_EQ(queries[0].seriesQuery, "up");
  EXPECT_EQ(queries[1].backend, "thanos");
  EXPECT_EQ(queries[1].seriesQuery, "up");
  EXPECT_EQ(queries[1].key, rules[1].discoveryKey());
}

}  // namespace rule_set_test
}  // namespace gpuscale::rules
