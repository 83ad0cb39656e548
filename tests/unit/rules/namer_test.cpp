#include "gpuscale/rules/namer.h"

#include <gtest/gtest.h>

#include "compile_text.h"

namespace gpuscale::rules {
namespace namer_test {

// One custom rule built from `resources` and `query`.
std::string customRule(const std::string& resources, const std::string& query) {
  return "rules:\n- seriesQuery: x\n  resources: " + resources + "\n  metricsQuery: '" + query +
         "'\n";
}

constexpr const char* kPodOverrides =
    "{overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}";

// One rule (its `resources` and metricsQuery) and one request for `series`: a custom metric's
// (`resource` and `names`) or an external metric's (they stay empty). The defaults are the request
// most custom rows make: pod "a" of namespace "ns", rule resources kPodOverrides.
struct QueryRow {
  const char* what;
  const char* resources = kPodOverrides;
  const char* query;
  const char* series = "x";
  GroupResource resource{"", "pods"};
  const char* ns = "ns";
  std::vector<std::string> names{"a"};
  const char* selector = "";
  bool ok = true;
  const char* expected;  // the query, or a fragment of the error
};

// prometheus-adapter's examples (series_registry_test.go and metrics_query_test.go) and the
// Triton rule of rules/triton.yaml.
const QueryRow kCustomRows[] = {
    {.what = "two pods in a namespace (series_registry_test)",
     .query =
         R"(sum(rate(<<.Series>>{<<.LabelMatchers>>,container!="POD"}[1m])) by (<<.GroupBy>>))",
     .series = "container_some_count_total",
     .ns = "somens",
     .names = {"somepod1", "somepod2"},
     .expected =
         R"(sum(rate(container_some_count_total{namespace="somens",pod=~"somepod1|somepod2",container!="POD"}[1m])) by (pod))"},
    {.what = "selector, kube_ prefix template, one service",
     .resources = "{template: \"kube_<<.Resource>>\"}",
     .query = "sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)",
     .series = "ingress_hits_total",
     .resource = {"", "services"},
     .ns = "somens",
     .names = {"somesvc"},
     .selector = "param1=value1",
     .expected =
         R"(sum(rate(ingress_hits_total{param1="value1",kube_namespace="somens",kube_service="somesvc"}[1m])) by (kube_service))"},
    {.what = "root-scoped node",
     .resources = "{template: \"kube_<<.Resource>>\"}",
     .query = "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
     .series = "node_gigawatts",
     .resource = {"", "nodes"},
     .ns = "",
     .names = {"somenode"},
     .expected = R"(sum(node_gigawatts{kube_node="somenode"}) by (kube_node))"},
    {.what = "the Triton rule of rules/triton.yaml",
     .query = "avg(delta(nv_inference_queue_duration_us{<<.LabelMatchers>>}[30s])/"
              "(1+delta(nv_inference_request_success{<<.LabelMatchers>>}[30s]))) by (<<.GroupBy>>)",
     .series = "nv_inference_queue_duration_us",
     .ns = "default",
     .names = {"a", "b"},
     .expected =
         R"(avg(delta(nv_inference_queue_duration_us{namespace="default",pod=~"a|b"}[30s])/(1+delta(nv_inference_request_success{namespace="default",pod=~"a|b"}[30s]))) by (pod))"},
    {.what = "namespace object (the /namespaces/{ns}/metrics/{m} route: root-scoped, resource "
             "namespaces)",
     .query = "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
     .resource = {"", "namespaces"},
     .ns = "",
     .names = {"ns1"},
     .expected = R"(sum(x{namespace="ns1"}) by (namespace))"},
    {.what = "deployments through the group template",
     .resources = "{template: \"<<.Group>>_<<.Resource>>\"}",
     .query = "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
     .resource = {"apps", "deployments"},
     .ns = "",
     .names = {"d"},
     .expected = R"(sum(x{apps_deployment="d"}) by (apps_deployment))"},
    {.what = "GroupBySlice prints like Go", .query = "<<.GroupBySlice>>", .expected = "[pod]"},
    {.what = "LabelValuesByName index",
     .query =
         R"(x{pod=~"<<index .LabelValuesByName "pod">>",namespace="<<index .LabelValuesByName "namespace">>"})",
     .names = {"a", "b"},
     .expected = R"(x{pod=~"a|b",namespace="ns"})"},
    {.what = "selector values appear in LabelValuesByName",
     .query = R"(<<index .LabelValuesByName "zone">>)",
     .selector = "zone in (b,a)",
     .expected = "a|b"},
    {.what = "all selector forms, sorted, before namespace and resource",
     .query = "<<.LabelMatchers>>",
     .selector = "z!=1,y,!x,w notin (q),v in (r,s)",
     .expected = R"(v=~"r|s",w!~"q",x="",y!="",z!="1",namespace="ns",pod="a")"},
    {.what = "a name that tries to inject",
     .query = "x{<<.LabelMatchers>>}",
     .names = {R"(a"} or vector(1) or x{a=")"},
     .expected = R"(x{namespace="ns",pod="a\"} or vector(1) or x{a=\""})"},
    {.what = "a namespace that tries to inject",
     .query = "x{<<.LabelMatchers>>}",
     .ns = "n\"}",
     .expected = R"(x{namespace="n\"}",pod="a"})"},
    {.what = "no names is an error",
     .query = "x",
     .names = {},
     .ok = false,
     .expected = "no resource names requested"},
    {.what = "namespaced query without a namespace label",
     .resources = "{overrides: {pod: {resource: pod}}}",
     .query = "x",
     .ok = false,
     .expected = "no generic resource label form specified for this metric"},
    {.what = "resource without a label",
     .resources = "{overrides: {namespace: {resource: namespace}}}",
     .query = "x",
     .resource = {"", "services"},
     .ok = false,
     .expected = "unable to convert resource services into label"},
    {.what = "unsupported selector operator",
     .query = "x",
     .selector = "k>1",
     .ok = false,
     .expected = "operator not supported"},
    {.what = "empty query",
     .query = "",
     .ok = false,
     .expected = "empty query produced by metrics query template"},
    {.what = "unknown field fails when executing",
     .query = "<<.LabelMatchersByName>>",
     .ok = false,
     .expected = "can't evaluate field LabelMatchersByName"},
    // Prometheus rejects a regex matcher that is not UTF-8 (promtool: "error parsing regexp:
    // invalid UTF-8"), and no label value can equal such a name: a bad request, not a query.
    {.what = "object name that is not UTF-8",
     .query = "<<.LabelMatchers>>",
     .names = {"a\xff"
               "b",
               "c"},
     .ok = false,
     .expected = R"(object name "a\xffb" is not valid UTF-8)"},
    {.what = "namespace that is not UTF-8",
     .query = "<<.LabelMatchers>>",
     .ns = "ns\xc3",
     .ok = false,
     .expected = R"(namespace "ns\xc3" is not valid UTF-8)"},
    {.what = "names that are UTF-8 but not ASCII are quoted as they are",
     .query = "<<.LabelMatchers>>",
     .names = {"\u540d\u524d", "a\"b"},
     .expected = R"(namespace="ns",pod=~"名前|a\"b")"},
};

TEST(QueryFor, CustomTable) {
  for (const QueryRow& row : kCustomRows) {
    SCOPED_TRACE(row.what);
    std::shared_ptr<const RuleSet> set = compileText(customRule(row.resources, row.query));
    ASSERT_NE(set, nullptr);
    core::LabelSelector selector;
    if (*row.selector != '\0') {
      core::Result<core::LabelSelector> parsed = core::LabelSelector::parse(row.selector);
      ASSERT_TRUE(parsed.ok());
      selector = *parsed;
    }
    QueryRequest request{row.series, row.resource, row.ns, row.names, &selector, {}};
    core::Result<std::string> query = set->rules.at(0).queryFor(request);
    expectQuery(query, row.ok, row.expected);
  }
}

// externals, including namespaced: false and the always-empty GroupBy.
const QueryRow kExternalRows[] = {
    {"selector only (metrics_query_test)",
     "{template: <<.Resource>>}",
     "<<.LabelMatchers>>",
     "queue_depth",
     {},
     "",
     {},
     "foo=bar,qux in (baz,bar)",
     true,
     R"(foo="bar",qux=~"bar|baz")"},
    {"namespace label namespaces",
     "{overrides: {namespaces: {resource: namespace}}}",
     "<<.LabelMatchers>>",
     "queue_depth",
     {},
     "default",
     {},
     "foo=bar",
     true,
     R"(foo="bar",namespaces="default")"},
    {"namespaced: false drops the namespace matcher",
     "{namespaced: false, overrides: {namespace: {resource: namespace}}}",
     "sum(queue_depth{<<.LabelMatchers>>}) by (name)",
     "queue_depth",
     {},
     "default",
     {},
     "queue=q1",
     true,
     R"(sum(queue_depth{queue="q1"}) by (name))"},
    {"GroupBy is empty for externals",
     "{template: <<.Resource>>}",
     "sum(x) by (<<.GroupBy>>)",
     "queue_depth",
     {},
     "ns",
     {},
     "",
     true,
     "sum(x) by ()"},
    {"GroupBySlice is empty for externals",
     "{template: <<.Resource>>}",
     "<<.GroupBySlice>>",
     "queue_depth",
     {},
     "ns",
     {},
     "",
     true,
     "[]"},
    {"series",
     "{template: <<.Resource>>}",
     "<<.Series>>{<<.LabelMatchers>>}",
     "queue_depth",
     {},
     "ns",
     {},
     "",
     true,
     R"(queue_depth{namespace="ns"})"},
    {"namespaced without a namespace label fails",
     "{}",
     "x",
     "queue_depth",
     {},
     "ns",
     {},
     "",
     false,
     "no generic resource label form"},
    {"namespaced without a namespace label works without a namespace",
     "{}",
     "x{<<.LabelMatchers>>}",
     "queue_depth",
     {},
     "",
     {},
     "a=b",
     true,
     R"(x{a="b"})"},
    {"namespace that is not UTF-8",
     "{template: <<.Resource>>}",
     "<<.LabelMatchers>>",
     "queue_depth",
     {},
     "ns\xe2\x82",
     {},
     "",
     false,
     "is not valid UTF-8"},
};

TEST(QueryFor, ExternalTable) {
  for (const QueryRow& row : kExternalRows) {
    SCOPED_TRACE(row.what);
    std::string yaml =
        "externalRules:\n- seriesQuery: x\n  resources: " + std::string(row.resources) +
        "\n  metricsQuery: '" + row.query + "'\n";
    std::shared_ptr<const RuleSet> set = compileText(yaml);
    ASSERT_NE(set, nullptr);
    core::Result<core::LabelSelector> selector = core::LabelSelector::parse(row.selector);
    ASSERT_TRUE(selector.ok());
    core::Result<std::string> query =
        set->externalRules.at(0).externalQueryFor(row.series, row.ns, &*selector);
    expectQuery(query, row.ok, row.expected);
  }
}

TEST(QueryFor, ResourceRulesGroupByPodAndContainer) {
  std::shared_ptr<const RuleSet> set = compileText(R"(resourceRules:
  cpu:
    containerLabel: container
    containerQuery: 'sum by (<<.GroupBy>>) (irate(container_cpu_usage_seconds_total{<<.LabelMatchers>>,container!="",pod!=""}[4m]))'
    nodeQuery: 'sum by (<<.GroupBy>>) (irate(node_cpu_usage_seconds_total{<<.LabelMatchers>>}[4m]))'
    resources: {overrides: {namespace: {resource: namespace}, node: {resource: node}, pod: {resource: pod}}}
  memory:
    containerLabel: container
    containerQuery: 'x'
    nodeQuery: 'y'
    resources: {overrides: {namespace: {resource: namespace}, node: {resource: node}, pod: {resource: pod}}}
  window: 5m
)");
  ASSERT_NE(set, nullptr);
  ASSERT_TRUE(set->resourceRules.has_value());
  EXPECT_EQ(set->resourceRules->window, std::chrono::minutes(5));
  std::vector<std::string> pods = {"p1", "p2"};
  core::Result<std::string> container = set->resourceRules->cpu.containerQueryFor("ns", pods);
  ASSERT_TRUE(container.ok()) << container.status().message();
  EXPECT_EQ(
      *container,
      R"(sum by (pod,container) (irate(container_cpu_usage_seconds_total{namespace="ns",pod=~"p1|p2",container!="",pod!=""}[4m])))");
  std::vector<std::string> nodes = {"n1"};
  core::Result<std::string> node = set->resourceRules->cpu.nodeQueryFor(nodes);
  ASSERT_TRUE(node.ok()) << node.status().message();
  EXPECT_EQ(*node, R"(sum by (node) (irate(node_cpu_usage_seconds_total{node="n1"}[4m])))");
}

TEST(QueryFor, AnyNameKeepsWildcardQueriesSmall) {
  std::shared_ptr<const RuleSet> set = compileText(customRule(
      kPodOverrides,
      R"(sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) <<index .LabelValuesByName "pod">>)"));
  ASSERT_NE(set, nullptr);
  QueryRequest request{"x", {"", "pods"}, "ns", {}, nullptr, {}, true};
  core::Result<std::string> query = set->rules.at(0).queryFor(request);
  ASSERT_TRUE(query.ok()) << query.status().message();
  EXPECT_EQ(*query, R"(sum(x{namespace="ns",pod!=""}) by (pod) .+)");
}

TEST(MetricNameFor, UsesTheRuleRegexAndAs) {
  std::shared_ptr<const RuleSet> set = compileText(
      "rules:\n- seriesQuery: x\n  resources: {template: <<.Resource>>}\n  name: {matches: "
      "\"^(.*)_total$\", as: \"${1}_per_second\"}\n  metricsQuery: x\n");
  ASSERT_NE(set, nullptr);
  const CompiledRule& rule = set->rules.at(0);
  std::string metric;
  EXPECT_TRUE(rule.metricNameFor("http_requests_total", metric));
  EXPECT_EQ(metric, "http_requests_per_second");
  EXPECT_FALSE(rule.metricNameFor("http_requests", metric));
  EXPECT_EQ(rule.firstFailingFilter("http_requests"), 0) << "the implicit name filter drops it";
  EXPECT_EQ(rule.firstFailingFilter("http_requests_total"), -1);
}

}  // namespace namer_test
}  // namespace gpuscale::rules
