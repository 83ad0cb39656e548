#include "gpuscale/rules/loader.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace gpuscale::rules {
namespace loader_test {

struct ErrorRow {
  const char* what;
  const char* yaml;
  const char* message;  // the whole message: "FILE:LINE:COL: PATH: text"
};

// Each row is a whole file; the expected message is exact, position included.
const ErrorRow kErrorRows[] = {
    {"empty file", "",
     "t.yaml: the rule file is empty (expected rules, externalRules or resourceRules)"},
    {"only comments", "# nothing\n---\n",
     "t.yaml: the rule file is empty (expected rules, externalRules or resourceRules)"},
    {"no rules at all", "rules: []\n",
     "t.yaml:1:1: the rule file defines no rules, externalRules or resourceRules"},
    {"top level is a list", "- a\n",
     "t.yaml:1:1: expected a mapping with rules, externalRules, resourceRules or backends at the "
     "top level, got a sequence"},
    {"unknown top-level key", "rules: []\nrulez: []\n",
     "t.yaml:2:1: unknown field \"rulez\" (expected rules, externalRules, resourceRules, "
     "backends)"},
    {"duplicate top-level key", "rules: []\nrules: []\n",
     "t.yaml:2:1: duplicate key \"rules\" (first at line 1, column 1)"},
    {"rules is not a list", "rules: {}\n",
     "t.yaml:1:8: rules: expected a list of rules, got a mapping"},
    {"a rule is a string", "rules:\n- hello\n",
     "t.yaml:2:3: rules[0]: expected a rule (a mapping), got a scalar"},
    {"unknown key in a rule", "rules:\n- seriesQuery: up\n  metricQuery: x\n",
     "t.yaml:3:3: rules[0]: unknown field \"metricQuery\" (expected seriesQuery, seriesFilters, "
     "resources, name, metricsQuery, backend)"},
    {"duplicate key in a rule (yaml-cpp would keep one silently)",
     "rules:\n- seriesQuery: up\n  metricsQuery: a\n  metricsQuery: b\n",
     "t.yaml:4:3: rules[0]: duplicate key \"metricsQuery\" (first at line 3, column 3)"},
    {"unknown key in name, fourth rule",
     "rules:\n- {seriesQuery: a}\n- {seriesQuery: b}\n- {seriesQuery: c}\n- seriesQuery: d\n  "
     "name:\n"
     "    match: x\n",
     "t.yaml:7:5: rules[3].name: unknown field \"match\" (expected matches, as)"},
    {"string expected, mapping given", "rules:\n- seriesQuery: {a: b}\n",
     "t.yaml:2:16: rules[0].seriesQuery: expected a string, got a mapping"},
    {"string expected, list given", "rules:\n- seriesQuery: up\n  name:\n    as: [a]\n",
     "t.yaml:4:9: rules[0].name.as: expected a string, got a sequence"},
    {"namespaced is not a boolean",
     "externalRules:\n- seriesQuery: up\n  resources:\n    namespaced: maybe\n",
     "t.yaml:4:17: externalRules[0].resources.namespaced: expected true or false, got \"maybe\""},
    {"filters is not a list", "rules:\n- seriesQuery: up\n  seriesFilters: {is: x}\n",
     "t.yaml:3:18: rules[0].seriesFilters: expected a list of filters, got a mapping"},
    {"unknown key in a filter", "rules:\n- seriesQuery: up\n  seriesFilters:\n  - iz: x\n",
     "t.yaml:4:5: rules[0].seriesFilters[0]: unknown field \"iz\" (expected is, isNot)"},
    {"duplicate override label",
     "rules:\n- seriesQuery: up\n  resources:\n    overrides:\n      pod: {resource: pod}\n"
     "      pod: {resource: pod}\n",
     "t.yaml:6:7: rules[0].resources.overrides: duplicate key \"pod\" (first at line 5, column 7)"},
    {"override is a string",
     "rules:\n- seriesQuery: up\n  resources:\n    overrides:\n      pod: pods\n",
     "t.yaml:5:12: rules[0].resources.overrides.pod: expected a mapping, got a scalar"},
    {"unknown key in an override",
     "rules:\n- seriesQuery: up\n  resources:\n    overrides:\n      pod: {resourc: pod}\n",
     "t.yaml:5:13: rules[0].resources.overrides.pod: unknown field \"resourc\" (expected group, "
     "resource)"},
    {"unknown key in resourceRules", "resourceRules:\n  cpu: {}\n  disk: {}\n",
     "t.yaml:3:3: resourceRules: unknown field \"disk\" (expected cpu, memory, window)"},
    {"unknown key in resourceRules.cpu", "resourceRules:\n  cpu:\n    containerQueries: x\n",
     "t.yaml:3:5: resourceRules.cpu: unknown field \"containerQueries\" (expected containerQuery, "
     "nodeQuery, resources, containerLabel)"},
    {"malformed YAML: bad indentation", "rules:\n- seriesQuery: up\n   name: x\n",
     "t.yaml:3:8: malformed YAML: illegal map value"},
    {"malformed YAML: unclosed flow mapping", "rules:\n- {seriesQuery: up\n",
     "t.yaml:3:1: malformed YAML: end of map flow not found"},
    {"malformed YAML: bad escape", "rules:\n- seriesQuery: \"up\\q\"\n",
     "t.yaml:2:21: malformed YAML: unknown escape character: q"},
    {"malformed YAML: undefined alias", "rules:\n- seriesQuery: *a\n",
     "t.yaml:2:16: malformed YAML: the referenced anchor is not defined"},
    {"tab indentation", "rules:\n\t- seriesQuery: up\n", "t.yaml:2:2: malformed YAML: "},
    {"backends is not a list", "backends: {name: a}\nrules:\n- seriesQuery: up\n",
     "t.yaml:1:11: backends: expected a list of backends, got a mapping"},
    {"a backend is a string", "backends:\n- thanos\nrules:\n- seriesQuery: up\n",
     "t.yaml:2:3: backends[0]: expected a backend (a mapping), got a scalar"},
    {"unknown key in a backend, second backend",
     "backends:\n- {name: a, url: 'http://a'}\n- name: b\n  tenant: x\nrules:\n- seriesQuery: up\n",
     "t.yaml:4:3: backends[1]: unknown field \"tenant\" (expected name, url, headers, "
     "bearerTokenFile, caFile, clientCertFile, clientKeyFile, insecureSkipTLSVerify, timeout, "
     "verb)"},
    {"headers is a list", "backends:\n- name: a\n  headers: [X-Scope-OrgID]\n",
     "t.yaml:3:12: backends[0].headers: expected a mapping, got a sequence"},
    {"header value is a mapping", "backends:\n- name: a\n  headers:\n    X-Scope-OrgID: {a: b}\n",
     "t.yaml:4:20: backends[0].headers.X-Scope-OrgID: expected a string, got a mapping"},
    {"insecureSkipTLSVerify is not a boolean",
     "backends:\n- name: a\n  insecureSkipTLSVerify: sometimes\n",
     "t.yaml:3:26: backends[0].insecureSkipTLSVerify: expected true or false, got \"sometimes\""},
    {"a rule's backend is a list", "rules:\n- seriesQuery: up\n  backend: [a]\n",
     "t.yaml:3:12: rules[0].backend: expected a string, got a sequence"},
};

TEST(LoaderErrors, Table) {
  for (const ErrorRow& row : kErrorRows) {
    SCOPED_TRACE(row.what);
    core::Result<RuleConfig> config = parseRuleConfig(row.yaml, "t.yaml");
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().httpCode(), 422);
    const std::string message = config.status().message();
    if (std::string_view(row.message).ends_with(": ")) {
      EXPECT_EQ(message.substr(0, std::string_view(row.message).size()), row.message);
    } else {
      EXPECT_EQ(message, row.message);
    }
  }
}

TEST(Loader, ReadsBackendsAndRuleBackends) {
  const char* yaml = R"(backends:
- name: thanos
  url: https://thanos:9090/prefix
  headers:
    X-Scope-OrgID: tenant-a
    X-Other: "2"
  bearerTokenFile: /token
  caFile: /ca.pem
  clientCertFile: /c.pem
  clientKeyFile: /k.pem
  insecureSkipTLSVerify: true
  timeout: 3s
  verb: POST
rules:
- seriesQuery: up
  backend: thanos
externalRules:
- seriesQuery: up
)";
  core::Result<RuleConfig> parsed = parseRuleConfig(yaml, "b.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->backends.size(), 1u);
  const BackendConfig& b = parsed->backends[0];
  EXPECT_EQ(b.path, "backends[0]");
  EXPECT_EQ(b.pos.line, 2);
  EXPECT_EQ(b.pos.column, 3);
  EXPECT_EQ(b.name.value, "thanos");
  EXPECT_EQ(b.url.value, "https://thanos:9090/prefix");
  ASSERT_EQ(b.headers.size(), 2u);
  EXPECT_EQ(b.headers[0].first.value, "X-Scope-OrgID");
  EXPECT_EQ(b.headers[0].second.value, "tenant-a");
  EXPECT_EQ(b.headers[0].first.pos.line, 5);
  EXPECT_EQ(b.headers[1].second.value, "2");
  EXPECT_EQ(b.bearerTokenFile.value, "/token");
  EXPECT_EQ(b.caFile.value, "/ca.pem");
  EXPECT_EQ(b.clientCertFile.value, "/c.pem");
  EXPECT_EQ(b.clientKeyFile.value, "/k.pem");
  EXPECT_TRUE(b.insecureSkipTLSVerify.value);
  EXPECT_EQ(b.timeout.value, "3s");
  EXPECT_EQ(b.verb.value, "POST");
  ASSERT_EQ(parsed->rules.size(), 1u);
  EXPECT_EQ(parsed->rules[0].backend.value, "thanos");
  EXPECT_EQ(parsed->rules[0].backend.pos.line, 16);
  EXPECT_EQ(parsed->rules[0].backend.pos.column, 12);
  EXPECT_FALSE(parsed->externalRules[0].backend.present);
}

TEST(Loader, ReadsEveryFieldWithPositions) {
  const char* yaml = R"(rules:
- seriesQuery: 'nv_inference_queue_duration_us{namespace="default",pod!=""}'
  seriesFilters:
  - is: "^nv_"
  - isNot: "_bytes$"
  resources:
    template: "kube_<<.Resource>>"
    overrides:
      namespace: {resource: "namespace"}
      pod: {group: "", resource: "pod"}
  name:
    matches: "nv_inference_queue_duration_us"
    as: "avg_time_queue_us"
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
externalRules:
- seriesQuery: queue_depth
  resources:
    namespaced: false
  metricsQuery: x
resourceRules:
  cpu:
    containerQuery: c
    nodeQuery: n
    resources: {overrides: {node: {resource: node}}}
    containerLabel: container
  window: 5m
)";
  core::Result<RuleConfig> parsed = parseRuleConfig(yaml, "full.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const RuleConfig& config = *parsed;
  ASSERT_EQ(config.rules.size(), 1u);
  const DiscoveryRule& rule = config.rules[0];
  EXPECT_EQ(rule.path, "rules[0]");
  EXPECT_EQ(rule.pos.line, 2);
  EXPECT_EQ(rule.pos.column, 3);
  EXPECT_EQ(rule.seriesQuery.value,
            R"(nv_inference_queue_duration_us{namespace="default",pod!=""})");
  EXPECT_EQ(rule.seriesQuery.pos.line, 2);
  EXPECT_EQ(rule.seriesQuery.pos.column, 16);
  ASSERT_EQ(rule.seriesFilters.size(), 2u);
  EXPECT_EQ(rule.seriesFilters[0].is.value, "^nv_");
  EXPECT_FALSE(rule.seriesFilters[0].isNot.present);
  EXPECT_EQ(rule.seriesFilters[1].isNot.value, "_bytes$");
  EXPECT_EQ(rule.seriesFilters[1].pos.line, 5);
  EXPECT_EQ(rule.resources.labelTemplate.value, "kube_<<.Resource>>");
  ASSERT_EQ(rule.resources.overrides.size(), 2u);
  EXPECT_EQ(rule.resources.overrides[0].label, "namespace");
  EXPECT_EQ(rule.resources.overrides[0].target.resource.value, "namespace");
  EXPECT_EQ(rule.resources.overrides[1].label, "pod");
  EXPECT_EQ(rule.resources.overrides[1].pos.line, 10);
  EXPECT_EQ(rule.resources.overrides[1].pos.column, 7);
  EXPECT_TRUE(rule.resources.namespaced.value) << "namespaced defaults to true";
  EXPECT_FALSE(rule.resources.namespaced.present);
  EXPECT_EQ(rule.name.matches.value, "nv_inference_queue_duration_us");
  EXPECT_EQ(rule.name.as.value, "avg_time_queue_us");
  EXPECT_EQ(rule.name.as.pos.line, 13);
  EXPECT_EQ(rule.metricsQuery.pos.line, 14);
  ASSERT_EQ(config.externalRules.size(), 1u);
  EXPECT_EQ(config.externalRules[0].path, "externalRules[0]");
  EXPECT_FALSE(config.externalRules[0].resources.namespaced.value);
  ASSERT_TRUE(config.resourceRules.has_value());
  EXPECT_EQ(config.resourceRules->cpu.containerQuery.value, "c");
  EXPECT_EQ(config.resourceRules->cpu.containerLabel.value, "container");
  EXPECT_EQ(config.resourceRules->cpu.resources.overrides.size(), 1u);
  EXPECT_FALSE(config.resourceRules->memory.containerQuery.present);
  EXPECT_EQ(config.resourceRules->window.value, "5m");
  EXPECT_EQ(config.file, "full.yaml");
}

struct ScalarRow {
  const char* what;
  const char* yaml;
  const char* as;
};

const ScalarRow kScalarRows[] = {
    {"null value is empty", "rules:\n- seriesQuery: up\n  name: {as: }\n", ""},
    {"tilde is empty", "rules:\n- seriesQuery: up\n  name: {as: ~}\n", ""},
    {"a number is kept as written (yaml.v2 does the same for string fields)",
     "rules:\n- seriesQuery: up\n  name: {as: 0123}\n", "0123"},
    {"block scalar", "rules:\n- seriesQuery: up\n  name:\n    as: |\n      x\n", "x\n"},
};

TEST(Loader, ScalarsTable) {
  for (const ScalarRow& row : kScalarRows) {
    SCOPED_TRACE(row.what);
    core::Result<RuleConfig> config = parseRuleConfig(row.yaml, "t.yaml");
    ASSERT_TRUE(config.ok()) << config.status().message();
    EXPECT_EQ(config->rules.at(0).name.as.value, row.as);
  }
}

TEST(Loader, BooleansAsYaml11) {
  for (const char* word : {"true", "True", "yes", "on"}) {
    std::string yaml = std::string("externalRules:\n- resources: {namespaced: ") + word + "}\n";
    core::Result<RuleConfig> config = parseRuleConfig(yaml, "t.yaml");
    ASSERT_TRUE(config.ok()) << word;
    EXPECT_TRUE(config->externalRules.at(0).resources.namespaced.value) << word;
  }
  core::Result<RuleConfig> config =
      parseRuleConfig("externalRules:\n- resources: {namespaced: no}\n", "t.yaml");
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->externalRules.at(0).resources.namespaced.value);
}

TEST(Loader, ShippedRuleFilesLoad) {
  const char* source = std::getenv("GPUSCALE_SOURCE_DIR");
  ASSERT_NE(source, nullptr);
  for (const char* file :
       {"triton.yaml", "prometheus-adapter-defaults.yaml", "vllm.yaml", "dcgm.yaml"}) {
    core::Result<RuleConfig> config = loadRuleConfigFile(std::string(source) + "/rules/" + file);
    EXPECT_TRUE(config.ok()) << file << ": " << config.status().message();
  }
}

TEST(Loader, MissingFileIsAnError) {
  core::Result<RuleConfig> config = loadRuleConfigFile("/nonexistent/rules.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "/nonexistent/rules.yaml: unable to read rule file: No such file or directory");
}

TEST(Loader, DeeplyNestedInputDoesNotCrash) {
  std::string yaml = "rules: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
  core::Result<RuleConfig> config = parseRuleConfig(yaml, "t.yaml");
  EXPECT_FALSE(config.ok());
}

}  // namespace loader_test
}  // namespace gpuscale::rules
