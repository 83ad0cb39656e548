#include "gpuscale/rules/namer.h"

#include <gtest/gtest.h>

#include "compile_text.h"

namespace gpuscale::rules {
namespace {

// One custom rule built from `resources` and `query`.
std::string customRule(const std::string& resources, const std::string& query) {
  return "rules:\n- seriesQuery: x\n  resources: " + resources + "\n  metricsQuery: '" + query +
         "'\n";
}

constexpr const char* kPodOverrides =
    "{overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}";

struct CustomRow {
  const char* what;
  const char* resources;
  const char* query;
  const char* series;
  GroupResource resource;
  const char* ns;
  std::vector<std::string> names;
  const char* selector;
  bool ok;
  const char* expected;  // the query, or a fragment of the error
};

// prometheus-adapter's examples (series_registry_test.go and metrics_query_test.go) and the
// Triton rule of rules/triton.yaml.
const CustomRow kCustomRows[] = {
    {"two pods in a namespace (series_registry_test)",
     kPodOverrides,
     R"(sum(rate(<<.Series>>{<<.LabelMatchers>>,container!="POD"}[1m])) by (<<.GroupBy>>))",
     "container_some_count_total",
     {"", "pods"},
     "somens",
     {"somepod1", "somepod2"},
     "",
     true,
     R"(sum(rate(container_some_count_total{namespace="somens",pod=~"somepod1|somepod2",container!="POD"}[1m])) by (pod))"},
    {"selector, kube_ prefix template, one service",
     "{template: \"kube_<<.Resource>>\"}",
     "sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)",
     "ingress_hits_total",
     {"", "services"},
     "somens",
     {"somesvc"},
     "param1=value1",
     true,
     R"(sum(rate(ingress_hits_total{param1="value1",kube_namespace="somens",kube_service="somesvc"}[1m])) by (kube_service))"},
    {"root-scoped node",
     "{template: \"kube_<<.Resource>>\"}",
     "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
     "node_gigawatts",
     {"", "nodes"},
     "",
     {"somenode"},
     "",
     true,
     R"(sum(node_gigawatts{kube_node="somenode"}) by (kube_node))"},
    {"the Triton rule of rules/triton.yaml",
     kPodOverrides,
     "avg(delta(nv_inference_queue_duration_us{<<.LabelMatchers>>}[30s])/"
     "(1+delta(nv_inference_request_success{<<.LabelMatchers>>}[30s]))) by (<<.GroupBy>>)",
     "nv_inference_queue_duration_us",
     {"", "pods"},
     "default",
     {"a", "b"},
     "",
     true,
     R"(avg(delta(nv_inference_queue_duration_us{namespace="default",pod=~"a|b"}[30s])/(1+delta(nv_inference_request_success{namespace="default",pod=~"a|b"}[30s]))) by (pod))"},
    {"namespace object (the /namespaces/{ns}/metrics/{m} route: root-scoped, resource namespaces)",
     kPodOverrides,
     "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
     "x",
     {"", "namespaces"},
     "",
     {"ns1"},
     "",
     true,
     R"(sum(x{namespace="ns1"}) by (namespace))"},
    {"deployments through the group template",
     "{template: \"<<.Group>>_<<.Resource>>\"}",
     "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
     "x",
     {"apps", "deployments"},
     "",
     {"d"},
     "",
     true,
     R"(sum(x{apps_deployment="d"}) by (apps_deployment))"},
    {"GroupBySlice prints like Go",
     kPodOverrides,
     "<<.GroupBySlice>>",
     "x",
     {"", "pods"},
     "ns",
     {"a"},
     "",
     true,
     "[pod]"},
    {"LabelValuesByName index",
     kPodOverrides,
     R"(x{pod=~"<<index .LabelValuesByName "pod">>",namespace="<<index .LabelValuesByName "namespace">>"})",
     "x",
     {"", "pods"},
     "ns",
     {"a", "b"},
     "",
     true,
     R"(x{pod=~"a|b",namespace="ns"})"},
    {"selector values appear in LabelValuesByName",
     kPodOverrides,
     R"(<<index .LabelValuesByName "zone">>)",
     "x",
     {"", "pods"},
     "ns",
     {"a"},
     "zone in (b,a)",
     true,
     "a|b"},
    {"all selector forms, sorted, before namespace and resource",
     kPodOverrides,
     "<<.LabelMatchers>>",
     "x",
     {"", "pods"},
     "ns",
     {"a"},
     "z!=1,y,!x,w notin (q),v in (r,s)",
     true,
     R"(v=~"r|s",w!~"q",x="",y!="",z!="1",namespace="ns",pod="a")"},
    {"a name that tries to inject",
     kPodOverrides,
     "x{<<.LabelMatchers>>}",
     "x",
     {"", "pods"},
     "ns",
     {R"(a"} or vector(1) or x{a=")"},
     "",
     true,
     R"(x{namespace="ns",pod="a\"} or vector(1) or x{a=\""})"},
    {"a namespace that tries to inject",
     kPodOverrides,
     "x{<<.LabelMatchers>>}",
     "x",
     {"", "pods"},
     "n\"}",
     {"a"},
     "",
     true,
     R"(x{namespace="n\"}",pod="a"})"},
    {"no names is an error",
     kPodOverrides,
     "x",
     "x",
     {"", "pods"},
     "ns",
     {},
     "",
     false,
     "no resource names requested"},
    {"namespaced query without a namespace label",
     "{overrides: {pod: {resource: pod}}}",
     "x",
     "x",
     {"", "pods"},
     "ns",
     {"a"},
     "",
     false,
     "no generic resource label form specified for this metric"},
    {"resource without a label",
     "{overrides: {namespace: {resource: namespace}}}",
     "x",
     "x",
     {"", "services"},
     "ns",
     {"a"},
     "",
     false,
     "unable to convert resource services into label"},
    {"unsupported selector operator",
     kPodOverrides,
     "x",
     "x",
     {"", "pods"},
     "ns",
     {"a"},
     "k>1",
     false,
     "operator not supported"},
    {"empty query",
     kPodOverrides,
     "",
     "x",
     {"", "pods"},
     "ns",
     {"a"},
     "",
     false,
     "empty query produced by metrics query template"},
    {"unknown field fails when executing",
     kPodOverrides,
     "<<.LabelMatchersByName>>",
     "x",
     {"", "pods"},
     "ns",
     {"a"},
     "",
     false,
     "can't evaluate field LabelMatchersByName"},
    // Prometheus rejects a regex matcher that is not UTF-8 (promtool: "error parsing regexp:
    // invalid UTF-8"), and no label value can equal such a name: a bad request, not a query.
    {"object name that is not UTF-8",
     kPodOverrides,
     "<<.LabelMatchers>>",
     "x",
     {"", "pods"},
     "ns",
     {"a\xff"
      "b",
      "c"},
     "",
     false,
     R"(object name "a\xffb" is not valid UTF-8)"},
    {"namespace that is not UTF-8",
     kPodOverrides,
     "<<.LabelMatchers>>",
     "x",
     {"", "pods"},
     "ns\xc3",
     {"a"},
     "",
     false,
     R"(namespace "ns\xc3" is not valid UTF-8)"},
    {"names that are UTF-8 but not ASCII are quoted as they are",
     kPodOverrides,
     "<<.LabelMatchers>>",
     "x",
     {"", "pods"},
     "ns",
     {"\u540d\u524d", "a\"b"},
     "",
     true,
     R"(namespace="ns",pod=~"名前|a\"b")"},
};

TEST(QueryFor, CustomTable) {
  for (const CustomRow& row : kCustomRows) {
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

struct ExternalRow {
  const char* what;
  const char* resources;
  const char* query;
  const char* ns;
  const char* selector;
  bool ok;
  const char* expected;
};

// externals, including namespaced: false and the always-empty GroupBy.
const ExternalRow kExternalRows[] = {
    {"selector only (metrics_query_test)", "{template: <<.Resource>>}", "<<.LabelMatchers>>", "",
     "foo=bar,qux in (baz,bar)", true, R"(foo="bar",qux=~"bar|baz")"},
    {"namespace label namespaces", "{overrides: {namespaces: {resource: namespace}}}",
     "<<.LabelMatchers>>", "default", "foo=bar", true, R"(foo="bar",namespaces="default")"},
    {"namespaced: false drops the namespace matcher",
     "{namespaced: false, overrides: {namespace: {resource: namespace}}}",
     "sum(queue_depth{<<.LabelMatchers>>}) by (name)", "default", "queue=q1", true,
     R"(sum(queue_depth{queue="q1"}) by (name))"},
    {"GroupBy is empty for externals", "{template: <<.Resource>>}", "sum(x) by (<<.GroupBy>>)",
     "ns", "", true, "sum(x) by ()"},
    {"GroupBySlice is empty for externals", "{template: <<.Resource>>}", "<<.GroupBySlice>>", "ns",
     "", true, "[]"},
    {"series", "{template: <<.Resource>>}", "<<.Series>>{<<.LabelMatchers>>}", "ns", "", true,
     R"(queue_depth{namespace="ns"})"},
    {"namespaced without a namespace label fails", "{}", "x", "ns", "", false,
     "no generic resource label form"},
    {"namespaced without a namespace label works without a namespace", "{}",
     "x{<<.LabelMatchers>>}", "", "a=b", true, R"(x{a="b"})"},
    {"namespace that is not UTF-8", "{template: <<.Resource>>}", "<<.LabelMatchers>>", "ns\xe2\x82",
     "", false, "is not valid UTF-8"},
};

TEST(QueryFor, ExternalTable) {
  for (const ExternalRow& row : kExternalRows) {
    SCOPED_TRACE(row.what);
    std::string yaml =
        "externalRules:\n- seriesQuery: x\n  resources: " + std::string(row.resources) +
        "\n  metricsQuery: '" + row.query + "'\n";
    std::shared_ptr<const RuleSet> set = compileText(yaml);
    ASSERT_NE(set, nullptr);
    core::Result<core::LabelSelector> selector = core::LabelSelector::parse(row.selector);
    ASSERT_TRUE(selector.ok());
    core::Result<std::string> query =
        set->externalRules.at(0).externalQueryFor("queue_depth", row.ns, &*selector);
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

}  // namespace
}  // namespace gpuscale::rules
