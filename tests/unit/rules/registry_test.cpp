#include "gpuscale/rules/registry.h"

#include <gtest/gtest.h>

#include "compile_text.h"
#include "support/triton_rules.h"

namespace gpuscale::rules {
namespace registry_test {

// "pods/m ns=1 series=s rule=rules[0]" per entry, in registry order.
std::vector<std::string> describe(const CustomRegistry& registry) {
  std::vector<std::string> out;
  for (const CustomEntry& e : registry.entries()) {
    out.push_back(e.info.apiName() + (e.info.namespaced ? " namespaced" : " cluster") +
                  " series=" + e.seriesName + " " + e.rule->path());
  }
  return out;
}

constexpr const char* kTriton = gpuscale::testing::kTritonRules;

constexpr const char* kTemplate = R"(rules:
- seriesQuery: q
  resources: {template: "<<.Resource>>"}
  metricsQuery: '<<.Series>>'
)";

struct RegistryRow {
  const char* what;
  const char* yaml;
  std::vector<Series> series;  // all for the first rule's seriesQuery
  std::vector<std::string> entries;
};

// association, the namespaced flag, forced cluster scope, last writer wins.
const RegistryRow kRows[] = {
    {"the Triton story: pods namespaced, namespaces not",
     kTriton,
     {{"nv_inference_queue_duration_us", {"instance", "job", "model", "namespace", "pod"}}},
     {"namespaces/avg_time_queue_us cluster series=nv_inference_queue_duration_us rules[0]",
      "pods/avg_time_queue_us namespaced series=nv_inference_queue_duration_us rules[0]"}},
    {"a series the implicit name filter drops", kTriton, {{"other", {"namespace", "pod"}}}, {}},
    {"<<.Resource>> associates every resource-named label, job becomes jobs.batch",
     kTemplate,
     {{"http_requests", {"instance", "job", "namespace", "pod", "service"}}},
     {"namespaces/http_requests cluster series=http_requests rules[0]",
      "pods/http_requests namespaced series=http_requests rules[0]",
      "services/http_requests namespaced series=http_requests rules[0]",
      "jobs.batch/http_requests namespaced series=http_requests rules[0]"}},
    {"node only: not namespaced",
     kTemplate,
     {{"node_temp", {"node"}}},
     {"nodes/node_temp cluster series=node_temp rules[0]"}},
    {"node plus an unmapped label: nodes are still forced to cluster scope",
     kTemplate,
     {{"node_temp", {"instance", "node"}}},
     {"nodes/node_temp cluster series=node_temp rules[0]"}},
    {"namespace and node only: neither is namespaced",
     kTemplate,
     {{"m", {"namespace", "node"}}},
     {"namespaces/m cluster series=m rules[0]", "nodes/m cluster series=m rules[0]"}},
    {"persistentvolume is forced to cluster scope",
     kTemplate,
     {{"pv_m", {"persistentvolume"}}},
     {"persistentvolumes/pv_m cluster series=pv_m rules[0]"}},
    {"pod only is namespaced",
     kTemplate,
     {{"m", {"pod"}}},
     {"pods/m namespaced series=m rules[0]"}},
    {"a cluster-scoped resource other than the three is registered as namespaced (as upstream)",
     kTemplate,
     {{"m", {"ingressclass"}}},
     {"ingressclasses.networking.k8s.io/m namespaced series=m rules[0]"}},
    {"series without resource labels register nothing",
     kTemplate,
     {{"up", {"instance", "job2"}}},
     {}},
    {"last writer wins inside a rule (series order)",
     "rules:\n- seriesQuery: q\n  resources: {template: <<.Resource>>}\n  name: {matches: "
     "\"^(a|b)$\", "
     "as: same}\n  metricsQuery: x\n",
     {{"a", {"pod"}}, {"b", {"pod"}}},
     {"pods/same namespaced series=b rules[0]"}},
    {"last writer wins across rules (rule order)",
     "rules:\n- seriesQuery: q\n  resources: {template: <<.Resource>>}\n  name: {as: same}\n"
     "  metricsQuery: x\n- seriesQuery: q\n  resources: {template: <<.Resource>>}\n  name: "
     "{matches: "
     "\"^a$\", as: same}\n  metricsQuery: y\n",
     {{"a", {"pod"}}, {"b", {"pod"}}},
     {"pods/same namespaced series=a rules[1]"}},
    {"the $1_per_second trap registers the empty name",
     "rules:\n- seriesQuery: q\n  resources: {template: <<.Resource>>}\n  name: {matches: "
     "\"^(.*)_total$\", as: \"$1_per_second\"}\n  metricsQuery: x\n",
     {{"http_requests_total", {"pod"}}},
     {"pods/ namespaced series=http_requests_total rules[0]"}},
};

TEST(CustomRegistry, Table) {
  for (const RegistryRow& row : kRows) {
    SCOPED_TRACE(row.what);
    std::shared_ptr<const RuleSet> set = compileText(row.yaml);
    ASSERT_NE(set, nullptr);
    SeriesByQuery series;
    for (const std::string& query : set->seriesQueries(RuleKind::kCustom))
      series[query] = row.series;
    core::Result<std::shared_ptr<const CustomRegistry>> registry =
        CustomRegistry::build(set, series);
    ASSERT_TRUE(registry.ok()) << registry.status().message();
    std::vector<std::string> entries = describe(**registry);
    std::vector<std::string> expected = row.entries;
    EXPECT_EQ(entries, expected);
  }
}

TEST(CustomRegistry, FindAndSortedOrder) {
  std::shared_ptr<const RuleSet> set = compileText(kTemplate);
  ASSERT_NE(set, nullptr);
  SeriesByQuery series;
  series["q"] = {{"zeta", {"namespace", "pod"}}, {"alpha", {"namespace", "pod", "deployment"}}};
  auto registry = CustomRegistry::build(set, series);
  ASSERT_TRUE(registry.ok());
  const CustomRegistry& r = **registry;
  const CustomEntry* entry = r.find({"", "pods"}, true, "alpha");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->seriesName, "alpha");
  EXPECT_EQ(r.find({"", "pods"}, false, "alpha"), nullptr) << "namespaced is part of the key";
  EXPECT_NE(r.find({"apps", "deployments"}, true, "alpha"), nullptr);
  EXPECT_EQ(r.find({"apps", "deployments"}, true, "zeta"), nullptr);
  EXPECT_NE(r.find({"", "namespaces"}, false, "zeta"), nullptr);
  std::vector<std::string> names;
  for (const CustomEntry& e : r.entries()) names.push_back(e.info.apiName());
  EXPECT_EQ(names, (std::vector<std::string>{"namespaces/alpha", "namespaces/zeta", "pods/alpha",
                                             "pods/zeta", "deployments.apps/alpha"}));
}

TEST(CustomRegistry, StatisticsPerRuleAndFilter) {
  std::shared_ptr<const RuleSet> set = compileText(R"(rules:
- seriesQuery: q
  seriesFilters:
  - isNot: "^container_.*_seconds_total$"
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  name: {matches: "^container_(.*)_total$"}
  metricsQuery: '<<.Series>>'
- seriesQuery: q
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'no series field here'
)");
  ASSERT_NE(set, nullptr);
  SeriesByQuery series;
  series["q"] = {
      {"container_cpu_usage_seconds_total", {"namespace", "pod"}, 3},  // dropped by filter 0
      {"container_memory_bytes", {"namespace", "pod"}, 2},             // dropped by the name filter
      {"container_network_receive_bytes_total", {"namespace", "pod"}, 4},
      {"container_fs_reads_total", {"instance"}, 1},  // no resource label
      {"container_bad-name_total", {"pod"}, 5},       // unsafe for .Series in rule 0
  };
  auto registry = CustomRegistry::build(set, series);
  ASSERT_TRUE(registry.ok());
  const std::vector<RuleStats>& stats = (*registry)->ruleStats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].path, "rules[0]");
  EXPECT_EQ(stats[0].series, 15u);
  EXPECT_EQ(stats[0].droppedByFilter, (std::vector<size_t>{3, 2}));
  EXPECT_EQ(stats[0].droppedUnsafeName, 5u);
  EXPECT_EQ(stats[0].droppedNoResource, 1u);
  EXPECT_EQ(stats[0].matched, 4u);
  EXPECT_EQ(stats[0].entries, 2u)
      << "namespaces/network_receive_bytes and pods/network_receive_bytes";
  EXPECT_EQ(stats[1].droppedUnsafeName, 0u) << "rule 1 does not paste .Series";
  EXPECT_EQ(stats[1].droppedNoResource, 1u);
  EXPECT_EQ(stats[1].matched, 14u);
}

TEST(CustomRegistry, MissingSeriesQueryIsAnError) {
  std::shared_ptr<const RuleSet> set = compileText(kTemplate);
  ASSERT_NE(set, nullptr);
  auto registry = CustomRegistry::build(set, SeriesByQuery{});
  ASSERT_FALSE(registry.ok());
  EXPECT_EQ(registry.status().httpCode(), 500);
}

TEST(ExternalRegistry, LastWriterWinsAndSorted) {
  std::shared_ptr<const RuleSet> set = compileText(R"(externalRules:
- seriesQuery: a
  resources: {namespaced: false}
  name: {matches: "^queue_(.*)$"}
  metricsQuery: x
- seriesQuery: b
  metricsQuery: y
)");
  ASSERT_NE(set, nullptr);
  SeriesByQuery series;
  series["a"] = {{"queue_depth", {"queue"}}, {"queue_lag", LabelNames{}}, {"other", LabelNames{}}};
  series["b"] = {{"depth", LabelNames{}}, {"zzz", LabelNames{}}};
  auto registry = ExternalRegistry::build(set, series);
  ASSERT_TRUE(registry.ok()) << registry.status().message();
  std::vector<std::string> got;
  for (const ExternalEntry& e : (*registry)->entries()) {
    got.push_back(e.metric + "=" + e.seriesName + "@" + e.rule->path());
  }
  EXPECT_EQ(got, (std::vector<std::string>{"depth=depth@externalRules[1]",
                                           "lag=queue_lag@externalRules[0]",
                                           "zzz=zzz@externalRules[1]"}));
  const ExternalEntry* depth = (*registry)->find("depth");
  ASSERT_NE(depth, nullptr);
  EXPECT_EQ(depth->seriesName, "depth") << "rule 1 overwrote rule 0's queue_depth";
  EXPECT_EQ((*registry)->find("nope"), nullptr);
  EXPECT_EQ((*registry)->ruleStats()[0].droppedByFilter, (std::vector<size_t>{1}));
  EXPECT_EQ((*registry)->ruleStats()[0].entries, 1u);
}

TEST(CustomRegistry, ClassicMetricNames) {
  for (const char* name : {"vllm:num_requests_waiting", "_x1"}) {
    EXPECT_TRUE(isClassicMetricName(name)) << name;
  }
  for (const char* name : {"1x", "a-b", "a{b", ""}) EXPECT_FALSE(isClassicMetricName(name)) << name;
}

}  // namespace registry_test
}  // namespace gpuscale::rules
