#include "gpuscale/adapter/explain.h"

#include <gtest/gtest.h>

#include <set>

#include "fakes/prom_fake_client.h"
#include "gpuscale/adapter/explain_endpoint.h"
#include "gpuscale/prom/errors.h"
#include "rules_fixture.h"

namespace gpuscale::adapter {
namespace explain_test {

using testing::compile;

struct Drop {
  std::string reason;
  std::string filter;
  size_t count;
  std::vector<std::string> examples;
};

struct Row {
  std::string what;
  std::string rule;  // one custom or external rule (YAML list item)
  bool external = false;
  prom::MetricLabelNames names;
  std::vector<Drop> drops;
  std::vector<std::string> produced;  // "metric: resources"
};

std::string producedText(const ProducedMetric& m) {
  std::string out = m.metric + ":";
  for (const std::string& r : m.resources) out += " " + r;
  return out;
}

const std::vector<std::string> kPodLabels = {"namespace", "pod"};

TEST(ExplainDiscovery, PerFilterAccounting) {
  const std::vector<Row> rows = {
      {"a matching rule keeps every name and registers pods and namespaces",
       R"(- seriesQuery: 'a{pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)')",
       false,
       {{"a", kPodLabels}},
       {},
       {"a: namespaces (cluster-scoped) pods"}},
      {"isNot drops the names it matches, is drops the names it does not; each filter counted "
       "apart, first failing filter wins",
       R"(- seriesQuery: '{__name__=~".+"}'
  seriesFilters: [{is: "^http_"}, {isNot: "_bucket$"}]
  resources: {overrides: {pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)')",
       false,
       {{"grpc_x", kPodLabels},
        {"http_a_bucket", kPodLabels},
        {"http_b", kPodLabels},
        {"http_c_bucket", kPodLabels},
        {"up", kPodLabels}},
       {{"filter", "rules[0].seriesFilters[0].is", 2, {"grpc_x", "up"}},
        {"filter", "rules[0].seriesFilters[1].isNot", 2, {"http_a_bucket", "http_c_bucket"}}},
       {"http_b: pods"}},
      {"name.matches is an implicit filter with its own path",
       R"(- seriesQuery: '{__name__=~".+"}'
  name: {matches: "^(.*)_total$", as: "${1}_per_second"}
  resources: {overrides: {pod: {resource: pod}}}
  metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)')",
       false,
       {{"requests_total", kPodLabels}, {"temperature", kPodLabels}},
       {{"filter", "rules[0].name.matches", 1, {"temperature"}}},
       {"requests_per_second: pods"}},
      {"a series without the override labels is dropped for its missing resource label",
       R"(- seriesQuery: '{__name__=~"dcgm_.*"}'
  resources: {overrides: {kubernetes_pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)')",
       false,
       {{"dcgm_gpu_util", {"gpu", "instance"}}, {"dcgm_fb_used", {"instance", "kubernetes_pod"}}},
       {{"no_resource_label", "", 1, {"dcgm_gpu_util (labels: gpu, instance)"}}},
       {"dcgm_fb_used: pods"}},
      {"a label that fits the template but names no resource is not resolvable",
       R"(- seriesQuery: '{__name__=~".+"}'
  resources: {template: "kube_<<.Resource>>"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)')",
       false,
       {{"m1", {"kube_gizmo"}}, {"m2", {"instance"}}, {"m3", {"kube_pod", "kube_namespace"}}},
       {{"unresolvable_resource", "", 1, {"m1 (labels: kube_gizmo)"}},
        {"no_resource_label", "", 1, {"m2 (labels: instance)"}}},
       {"m3: namespaces (cluster-scoped) pods"}},
      {"a name that cannot be pasted as .Series is unsafe",
       R"(- seriesQuery: '{__name__=~".+"}'
  resources: {overrides: {pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)')",
       false,
       {{"ok_name", kPodLabels}, {"bad.name", kPodLabels}},
       {{"unsafe_name", "", 1, {"bad.name"}}},
       {"ok_name: pods"}},
      {"external rules need no resource label",
       R"(- seriesQuery: 'queue_depth'
  seriesFilters: [{isNot: "^internal_"}]
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>})')",
       true,
       {{"queue_depth", {"queue"}}, {"internal_depth", {"queue"}}},
       {{"filter", "externalRules[0].seriesFilters[0].isNot", 1, {"internal_depth"}}},
       {"queue_depth:"}},
      {"nothing matched: nothing dropped, nothing produced",
       R"(- seriesQuery: 'absent'
  resources: {overrides: {pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)')",
       false,
       {},
       {},
       {}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    auto set = compile((row.external ? "externalRules:\n" : "rules:\n") + row.rule + "\n");
    const rules::CompiledRule& rule = row.external ? set->externalRules[0] : set->rules[0];
    ExplainOptions options;
    options.maxExamples = 2;
    RuleExplanation got = explainDiscovery(rule, row.names, options);
    EXPECT_EQ(got.names, row.names.size());
    ASSERT_EQ(got.dropped.size(), row.drops.size());
    size_t dropped = 0;
    for (size_t i = 0; i < row.drops.size(); ++i) {
      EXPECT_EQ(got.dropped[i].reason, row.drops[i].reason);
      EXPECT_EQ(got.dropped[i].filter, row.drops[i].filter);
      EXPECT_EQ(got.dropped[i].count, row.drops[i].count);
      EXPECT_EQ(got.dropped[i].examples, row.drops[i].examples);
      dropped += got.dropped[i].count;
    }
    EXPECT_EQ(got.kept + dropped, got.names);
    std::vector<std::string> produced;
    for (const ProducedMetric& m : got.metrics) produced.push_back(producedText(m));
    EXPECT_EQ(produced, row.produced);

    // The registry counts the same outcomes.
    rules::SeriesByQuery series;
    auto& list = series[rule.seriesQuery()];
    for (const auto& [name, labels] : row.names) list.push_back(rules::Series{name, labels});
    for (const rules::CompiledRule& other :
         set->of(row.external ? rules::RuleKind::kCustom : rules::RuleKind::kExternal)) {
      series[other.seriesQuery()];
    }
    const rules::RuleStats stats =
        row.external ? (*rules::ExternalRegistry::build(set, series))->ruleStats()[0]
                     : (*rules::CustomRegistry::build(set, series))->ruleStats()[0];
    EXPECT_EQ(stats.matched, got.kept);
    size_t byFilters = 0, noResource = 0, unsafe = 0;
    for (const DroppedNames& d : got.dropped) {
      if (d.reason == "filter") byFilters += d.count;
      if (d.reason == "no_resource_label" || d.reason == "unresolvable_resource") {
        noResource += d.count;
      }
      if (d.reason == "unsafe_name") unsafe += d.count;
    }
    size_t statsFilters = 0;
    for (size_t n : stats.droppedByFilter) statsFilters += n;
    EXPECT_EQ(statsFilters, byFilters);
    EXPECT_EQ(stats.droppedNoResource, noResource);
    EXPECT_EQ(stats.droppedUnsafeName, unsafe);
  }
}

TEST(ExplainDiscovery, MetricFilterMarksRelevantRules) {
  auto set = compile(R"(
rules:
- seriesQuery: 'a{pod!=""}'
  resources: {overrides: {pod: {resource: pod}}}
  name: {matches: "^a$", as: "wanted"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: 'b{pod!=""}'
  resources: {overrides: {pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: '{__name__=~"c.*"}'
  seriesFilters: [{isNot: "^c$"}]
  resources: {overrides: {pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
)");
  ExplainOptions options;
  options.metric = "wanted";
  EXPECT_TRUE(explainDiscovery(set->rules[0], {{"a", {"pod"}}}, options).relevant);
  EXPECT_FALSE(explainDiscovery(set->rules[1], {{"b", {"pod"}}}, options).relevant);
  // A rule that would have named the metric but dropped it is relevant: that is the answer.
  options.metric = "c";
  RuleExplanation dropped = explainDiscovery(set->rules[2], {{"c", {"pod"}}}, options);
  EXPECT_TRUE(dropped.relevant);
  EXPECT_TRUE(dropped.metrics.empty());
}

// After the http_requests rule.
constexpr char kMoreRules[] = R"(externalRules:
- seriesQuery: 'queue_depth'
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>})'
)";
constexpr char kPods[] = R"(http_requests{namespace!="",pod!=""})";

class ExplainTest : public ::testing::Test {
 protected:
  ExplainTest() {
    prometheus_.setDiscoverable(kPods, "http_requests", {"namespace", "pod"});
    prometheus_.setLabelValues("namespace", {kPods}, std::vector<std::string>{"prod", "test"});
    prometheus_.setLabelValues("pod", {R"(http_requests{namespace="prod",namespace!="",pod!=""})"},
                               std::vector<std::string>{"web-1", "web-2"});
    prometheus_.setDiscoverable("queue_depth", "queue_depth", {"queue"});
  }

  fakes::FakePrometheusClient prometheus_;
  std::shared_ptr<const rules::RuleSet> rules_ = compile(testing::kHttpRequestsRules + kMoreRules);
};

TEST_F(ExplainTest, ExampleObjectFromLabelValuesAndOneLiveQuery) {
  const std::string promql = R"(sum(http_requests{namespace="prod",pod="web-1"}) by (pod))";
  prometheus_.setVector(promql, {testing::sample({{"pod", "web-1"}}, 2.5)});
  Explanation got = explain(*rules_, prometheus_, {});
  ASSERT_EQ(got.rules.size(), 2u);
  const RuleExplanation& custom = got.rules[0];
  ASSERT_TRUE(custom.example.has_value());
  EXPECT_EQ(custom.example->object, "pods prod/web-1");
  EXPECT_EQ(custom.example->promql, promql);
  ASSERT_TRUE(custom.sample.has_value());
  EXPECT_EQ(custom.sample->total, 1u);
  EXPECT_EQ(custom.sample->values.at(0).labels, R"({pod="web-1"})");
  EXPECT_EQ(custom.sample->values.at(0).value, 2.5);
  EXPECT_EQ(prometheus_.calls("query:" + promql), 1u);
  // External: no namespace label in the rule, so no namespace matcher; no data is an empty result.
  const RuleExplanation& external = got.rules[1];
  EXPECT_EQ(external.example->promql, "sum(queue_depth{})");
  EXPECT_EQ(external.sample->total, 0u);
  EXPECT_TRUE(external.sample->error.empty());
  EXPECT_NE(explanationText(got).find("empty result"), std::string::npos);
}

TEST_F(ExplainTest, DiscoveryAndQueryErrorsAreShownNotThrown) {
  fakes::FakePrometheusClient down;
  down.setDefaultError(prom::failure(prom::FailureKind::kConnection, "connection refused"));
  RuleStatus status(nullptr);
  status.queryFailed({"rules[0]", "http_requests"},
                     prom::failure(prom::FailureKind::kTimeout, "no answer within 2s"),
                     std::chrono::system_clock::now());
  Explanation got = explain(*rules_, down, {}, &status);
  ASSERT_EQ(got.rules.size(), 2u);
  EXPECT_NE(got.rules[0].discoveryError.find("connection failed"), std::string::npos)
      << got.rules[0].discoveryError;
  EXPECT_FALSE(got.rules[0].example.has_value());
  const std::string text = explanationText(got);
  EXPECT_NE(text.find("not served now: the series query failed"), std::string::npos) << text;
  EXPECT_NE(text.find("adapter query at"), std::string::npos) << text;
  EXPECT_NE(text.find("(timeout, metric http_requests)"), std::string::npos) << text;
  const std::string json = explanationJson(got);
  EXPECT_NE(json.find(R"("lastErrors": [)"), std::string::npos) << json;
}

TEST_F(ExplainTest, EachRuleIsExplainedAgainstItsOwnBackend) {
  // The same seriesQuery on two backends: the second one alone has the series.
  auto ruleSet = compile(R"(
backends:
- name: second
  url: http://second.invalid:9090
- name: third
  url: http://third.invalid:9090
externalRules:
- seriesQuery: 'jobs_waiting'
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>})'
- seriesQuery: 'jobs_waiting'
  backend: second
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>})'
- seriesQuery: 'jobs_waiting'
  backend: third
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>})'
)");
  fakes::FakePrometheusClient second;
  second.setLabelValues("__name__", {"jobs_waiting"}, std::vector<std::string>{"jobs_waiting"});
  second.setLabelNames({"jobs_waiting"}, std::vector<std::string>{"__name__", "queue"});
  second.setVector("sum(jobs_waiting{})", {testing::sample({}, 12)});
  BackendClients clients = [&](std::string_view name) -> prom::Client* {
    if (name == "second") return &second;
    return name == rules::kDefaultBackend ? &prometheus_ : nullptr;
  };
  Explanation got = explain(*ruleSet, clients, {});
  ASSERT_EQ(got.rules.size(), 3u);
  EXPECT_EQ(got.rules[0].backend, "default");
  EXPECT_EQ(got.rules[0].names, 0u);
  EXPECT_FALSE(got.rules[0].sample.has_value());
  EXPECT_EQ(got.rules[1].backend, "second");
  EXPECT_EQ(got.rules[1].names, 1u);
  ASSERT_TRUE(got.rules[1].sample.has_value());
  ASSERT_EQ(got.rules[1].sample->values.size(), 1u);
  EXPECT_EQ(got.rules[1].sample->values[0].value, 12);
  EXPECT_EQ(prometheus_.calls("query:sum(jobs_waiting{})"), 0u);
  // A backend without a client is that rule's error, not everyone's.
  EXPECT_NE(got.rules[2].discoveryError.find("backend \"third\" is not configured"),
            std::string::npos)
      << got.rules[2].discoveryError;
  const std::string text = explanationText(got);
  EXPECT_NE(text.find("  backend:       second\n"), std::string::npos) << text;
  EXPECT_NE(explanationJson(got).find(R"("backend": "second")"), std::string::npos);
}

TEST_F(ExplainTest, RuleAndMetricSelection) {
  ExplainOptions options;
  options.rule = "externalRules[0]";
  options.liveSample = false;
  Explanation got = explain(*rules_, prometheus_, options);
  ASSERT_EQ(got.rules.size(), 1u);
  EXPECT_EQ(got.rules[0].path, "externalRules[0]");
  EXPECT_FALSE(got.rules[0].sample.has_value());

  options = {};
  options.metric = "nope";
  options.liveSample = false;
  const std::string text = explanationText(explain(*rules_, prometheus_, options));
  EXPECT_NE(text.find("no rule produces, names or mentions metric \"nope\""), std::string::npos);
  EXPECT_NE(text.find("rules[0] (custom)"), std::string::npos);
}

// RBAC stand-in for /debug/explain: allows exactly the (user, verb, group, namespace, resource,
// subresource) tuples given, and records what it was asked.
class TableAuthorizer final : public apiserver::Authorizer {
 public:
  explicit TableAuthorizer(std::set<std::string> allowed) : allowed_(std::move(allowed)) {}
  core::Result<apiserver::AuthorizationDecision> authorize(
      const apiserver::UserInfo& user, const apiserver::RequestInfo& info) override {
    seen.push_back(info);
    const std::string key = user.name + " " + info.verb + " " + info.apiGroup + " " +
                            info.namespaceName + " " + info.resource + "/" + info.subresource;
    return apiserver::AuthorizationDecision{allowed_.contains(key), ""};
  }
  std::vector<apiserver::RequestInfo> seen;

 private:
  std::set<std::string> allowed_;
};

class ExplainEndpointTest : public ExplainTest {
 protected:
  apiserver::HttpResponse call(const std::string& query, std::set<std::string> allowed,
                               const std::string& user = "bob") {
    authorizer_ = std::make_shared<TableAuthorizer>(std::move(allowed));
    std::shared_ptr<prom::Client> client(&prometheus_, [](prom::Client*) {});
    auto backends = std::make_shared<const BackendSet>(
        std::vector<std::shared_ptr<const Backend>>{std::make_shared<const Backend>(
            std::string(rules::kDefaultBackend), client, client, nullptr)});
    ExplainEndpointConfig config;
    config.source = [this, backends] { return ExplainSource{rules_, backends}; };
    config.authorizer = authorizer_;
    return explainRoute(std::move(config))(apiserver::HttpRequest{},
                                           apiserver::QueryParams::parse(query),
                                           apiserver::UserInfo{user, "", {}, {}});
  }

  const std::string promql_ = R"(sum(http_requests{namespace="prod",pod="web-1"}) by (pod))";
  std::shared_ptr<TableAuthorizer> authorizer_;
};

TEST_F(ExplainEndpointTest, NamedNamespaceTheCallerMayNotReadIsForbidden) {
  prometheus_.setVector(promql_, {testing::sample({{"pod", "web-1"}}, 2.5)});
  const auto reply = call("metric=http_requests&namespace=prod",
                          {"bob get custom.metrics.k8s.io test pods/http_requests"});
  EXPECT_EQ(reply.status, 403);
  EXPECT_NE(reply.body.find(R"(User \"bob\" cannot get resource \"pods/http_requests\" in API )"
                            R"(group \"custom.metrics.k8s.io\" in the namespace \"prod\")"),
            std::string::npos)
      << reply.body;
  EXPECT_EQ(reply.body.find("web-1"), std::string::npos);
  EXPECT_EQ(prometheus_.calls("query:" + promql_), 0u);
  // The review is the metric request's own: get pods/<metric> named "*" in the namespace.
  ASSERT_EQ(authorizer_->seen.size(), 1u);
  const apiserver::RequestInfo& info = authorizer_->seen[0];
  EXPECT_TRUE(info.isResourceRequest);
  EXPECT_EQ(info.apiVersion, "v1beta1");
  EXPECT_EQ(info.name, "*");
}

TEST_F(ExplainEndpointTest, NamedNamespaceTheCallerMayReadShowsTheSample) {
  prometheus_.setVector(promql_, {testing::sample({{"pod", "web-1"}}, 2.5)});
  const auto reply = call("metric=http_requests&namespace=prod",
                          {"bob get custom.metrics.k8s.io prod pods/http_requests"});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_NE(reply.body.find("web-1"), std::string::npos) << reply.body;
  EXPECT_EQ(prometheus_.calls("query:" + promql_), 1u);
}

TEST_F(ExplainEndpointTest, PickedNamespaceIsCheckedAndNotNamedWhenRefused) {
  prometheus_.setVector(promql_, {testing::sample({{"pod", "web-1"}}, 2.5)});
  // "prod" is the first namespace with data; bob may read only "test".
  const auto reply =
      call("metric=http_requests", {"bob get custom.metrics.k8s.io test pods/http_requests"});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.body.find("web-1"), std::string::npos) << reply.body;
  EXPECT_EQ(reply.body.find("prod"), std::string::npos) << reply.body;
  EXPECT_NE(reply.body.find("name one you may read with namespace="), std::string::npos)
      << reply.body;
  EXPECT_EQ(prometheus_.calls("query:" + promql_), 0u);
}

TEST_F(ExplainEndpointTest, ExternalRulesAreAuthorizedAsTheirListRequest) {
  const std::string allowed = "bob list external.metrics.k8s.io test queue_depth/";
  EXPECT_EQ(call("rule=externalRules%5B0%5D&namespace=test", {allowed}).status, 200);
  ASSERT_EQ(authorizer_->seen.size(), 1u);
  EXPECT_EQ(authorizer_->seen[0].path,
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/test/queue_depth");
  EXPECT_EQ(call("rule=externalRules%5B0%5D&namespace=prod", {allowed}).status, 403);
  // Not namespaced and no namespace named: no request it stands for, so no sample.
  const auto unnamed = call("rule=externalRules%5B0%5D", {allowed});
  ASSERT_EQ(unnamed.status, 200);
  EXPECT_NE(unnamed.body.find("name one with namespace="), std::string::npos) << unnamed.body;
  EXPECT_EQ(unnamed.body.find("sum(queue_depth{})"), std::string::npos) << unnamed.body;
}

TEST_F(ExplainEndpointTest, NamespaceMustBeANamespaceName) {
  for (const char* bad : {"a%2Fb", "..", "UPPER"}) {
    EXPECT_EQ(call(std::string("namespace=") + bad, {}).status, 400) << bad;
  }
  EXPECT_TRUE(authorizer_->seen.empty());
}

TEST(SampleRequestInfo, TheRealRequestOfEachScope) {
  auto custom = sampleRequestInfo(
      {rules::RuleKind::kCustom, "m", k8s::GroupResource::parse("pods"), true, "ns"});
  ASSERT_TRUE(custom.ok());
  EXPECT_EQ(custom->path, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/*/m");
  auto ns =
      sampleRequestInfo({rules::RuleKind::kCustom, "m", rules::namespacesResource(), false, "ns"});
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->resource, "metrics");
  EXPECT_EQ(ns->name, "m");
  EXPECT_EQ(ns->namespaceName, "ns");
  auto nodes = sampleRequestInfo(
      {rules::RuleKind::kCustom, "m", k8s::GroupResource::parse("nodes"), false, ""});
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(nodes->path, "/apis/custom.metrics.k8s.io/v1beta1/nodes/*/m");
  EXPECT_TRUE(nodes->namespaceName.empty());
  EXPECT_FALSE(sampleRequestInfo(
                   {rules::RuleKind::kCustom, "a/b", k8s::GroupResource::parse("pods"), true, "ns"})
                   .ok());
  EXPECT_FALSE(sampleRequestInfo({rules::RuleKind::kExternal, "m", {}, true, ""}).ok());
}

}  // namespace explain_test
}  // namespace gpuscale::adapter
