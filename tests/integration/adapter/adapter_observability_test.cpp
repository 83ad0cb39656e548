// Explain and per-rule status against a real Prometheus scraping the simulator's Triton exporter:
// the `explain` CLI (a rule that matches, one dropped by seriesFilters, one whose resource label is
// missing), `/debug/explain` through kubectl get --raw, `/metrics` per rule and per metric after a
// Prometheus outage, and the Grafana dashboard's metric names against a live `/metrics`.
#include <gtest/gtest.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "adapter_process.h"
#include "support/http_test_server.h"

namespace gpuscale::adapter::testing {
namespace adapter_observability_test {

// The story's rule (rules[0]), then more.
constexpr char kMoreRules[] =
    R"yaml(- seriesQuery: '{__name__=~"nv_inference_(queue_duration_us|request_success)",pod!=""}'
  seriesFilters:
  - isNot: "_us$"
  - isNot: "_success$"
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: 'nv_inference_request_success{namespace!=""}'
  resources:
    overrides:
      kubernetes_pod: {resource: "pod"}
  metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[30s])) by (<<.GroupBy>>)'
)yaml";

constexpr char kNamed[] =
    "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/triton-1/avg_time_queue_us";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class AdapterExplainTest : public TritonStackSuite<AdapterExplainTest> {
 protected:
  static void SetUpTestSuite() {
    // A discovery window wider than the 1 s relist, so a slow scrape on a busy machine does not
    // empty the registry between two relists.
    startStack(std::string(gpuscale::testing::kTritonRules) + kMoreRules, {"--metrics-max-age=30s"},
               kNamed);
  }

  static ProcessResult explainCli(std::vector<std::string> extra) {
    std::vector<std::string> argv = {binary("gpuscale-adapter"),
                                     "explain",
                                     "--config",
                                     stack_->dir.file("rules.yaml"),
                                     "--prometheus-url",
                                     gpuscale::test::adapterUrl(prometheus_->url())};
    // As the server runs (AdapterProcess): Thanos' replica label left out of discovery.
    if (gpuscale::test::thanosUnderTest()) {
      argv.push_back(std::string("--thanos-replica-label=") + gpuscale::test::kThanosReplicaLabel);
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    return runProcess(argv);
  }
};

// The text block of one rule ("rules[1] (custom)" up to the blank line).
std::string ruleBlock(const std::string& text, const std::string& rule) {
  const size_t start = text.find(rule + " (");
  if (start == std::string::npos) return "";
  return text.substr(start, text.find("\n\n", start) - start);
}

TEST_F(AdapterExplainTest, CliTextPerRule) {
  ProcessResult r = explainCli({});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string matching = ruleBlock(r.out, "rules[0]");
  EXPECT_TRUE(contains(
      matching, R"(series query:  nv_inference_queue_duration_us{namespace="default",pod!=""})"))
      << r.out;
  EXPECT_TRUE(contains(matching, "matched:       1 metric name(s)")) << matching;
  EXPECT_TRUE(contains(matching, "dropped:       none")) << matching;
  EXPECT_TRUE(contains(matching, "example:       avg_time_queue_us for pods default/triton-"))
      << matching;
  EXPECT_TRUE(contains(
      matching,
      R"(promql:        avg(delta(nv_inference_queue_duration_us{namespace="default",pod="triton-)"))
      << matching;
  EXPECT_TRUE(contains(matching, "live sample:   1 sample(s): {pod=\"triton-")) << matching;
  EXPECT_TRUE(contains(
      matching, "verdict:       serves namespaces/avg_time_queue_us, pods/avg_time_queue_us"))
      << matching;

  const std::string filtered = ruleBlock(r.out, "rules[1]");
  EXPECT_TRUE(contains(filtered, "matched:       2 metric name(s)")) << filtered;
  EXPECT_TRUE(contains(
      filtered,
      R"(1 by rules[1].seriesFilters[0].isNot: isNot "_us$" (e.g. nv_inference_queue_duration_us))"))
      << filtered;
  EXPECT_TRUE(contains(
      filtered,
      R"(1 by rules[1].seriesFilters[1].isNot: isNot "_success$" (e.g. nv_inference_request_success))"))
      << filtered;
  EXPECT_TRUE(contains(filtered, "verdict:       not served: all 2 metric name(s) were dropped"))
      << filtered;

  const std::string noLabel = ruleBlock(r.out, "rules[2]");
  // Through Thanos the external `cluster` label is one more label of every series.
  EXPECT_TRUE(contains(noLabel, std::string("1 no resource label: needs a label that maps to a "
                                            "resource: overrides kubernetes_pod (e.g. "
                                            "nv_inference_request_success (labels: ") +
                                    (gpuscale::test::thanosUnderTest() ? "cluster, " : "") +
                                    "instance, job, model, namespace, pod, version))"))
      << noLabel;
  EXPECT_TRUE(contains(noLabel, "produced:      nothing")) << noLabel;
}

TEST_F(AdapterExplainTest, CliJsonAndMetricFilter) {
  ProcessResult r = explainCli({"-o", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["rules"].size(), 3u);
  const auto& filtered = doc["rules"][1];
  EXPECT_EQ(filtered["matched"], 2);
  EXPECT_EQ(filtered["kept"], 0);
  ASSERT_EQ(filtered["dropped"].size(), 2u);
  EXPECT_EQ(filtered["dropped"][1]["reason"], "filter");
  EXPECT_EQ(filtered["dropped"][1]["filter"], "rules[1].seriesFilters[1].isNot");
  EXPECT_EQ(filtered["dropped"][1]["count"], 1);
  EXPECT_EQ(doc["rules"][2]["dropped"][0]["reason"], "no_resource_label");
  EXPECT_EQ(doc["rules"][0]["metrics"][0]["metric"], "avg_time_queue_us");

  ProcessResult one = explainCli({"--metric", "avg_time_queue_us"});
  ASSERT_EQ(one.exitCode, 0) << one.err;
  EXPECT_TRUE(contains(one.out, "rules[0] (custom)"));
  EXPECT_FALSE(contains(one.out, "rules[1] (custom)")) << one.out;
}

TEST_F(AdapterExplainTest, CliShowsAnUnreachablePrometheus) {
  const uint16_t nothing = gpuscale::testing::freeLoopbackPort();
  ProcessResult r =
      runProcess({binary("gpuscale-adapter"), "explain", "--config", stack_->dir.file("rules.yaml"),
                  "--prometheus-url", "http://127.0.0.1:" + std::to_string(nothing)});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "last error:    discovery: prometheus connection failed")) << r.out;
  EXPECT_TRUE(contains(r.out, "not served now: the series query failed")) << r.out;
  ProcessResult bad =
      runProcess({binary("gpuscale-adapter"), "explain", "--prometheus-url", prometheus_->url()});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_TRUE(contains(bad.err, "--config is required")) << bad.err;
}

TEST_F(AdapterExplainTest, DebugExplainThroughKubectl) {
  ProcessResult text = adapter_->kubectl("/debug/explain?metric=avg_time_queue_us&output=text");
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "rules[0] (custom)")) << text.out;
  EXPECT_TRUE(contains(text.out, "last relist:")) << text.out;
  EXPECT_TRUE(contains(text.out, "verdict:       serves namespaces/avg_time_queue_us")) << text.out;

  ProcessResult json = adapter_->kubectl("/debug/explain?rule=rules%5B2%5D&sample=false");
  ASSERT_EQ(json.exitCode, 0) << json.err;
  auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["rules"].size(), 1u);
  EXPECT_EQ(doc["rules"][0]["rule"], "rules[2]");
  EXPECT_EQ(doc["rules"][0]["dropped"][0]["reason"], "no_resource_label");
  EXPECT_TRUE(doc["rules"][0].contains("lastRelistSuccess"));

  HttpReply wrong = curl(adapter_->url("/debug/explain?output=yaml"));
  EXPECT_EQ(wrong.code, 400) << wrong.body;
}

// A kube-apiserver stand-in for delegated authentication and authorization: TokenReview knows the
// tokens "alice-token" and "bob-token"; SubjectAccessReview allows only alice to get the
// non-resource path /debug/explain, and records every review.
class FakeDelegationServer {
 public:
  FakeDelegationServer()
      : server_([this](const gpuscale::test::HttpTestRequest& request,
                       gpuscale::test::HttpTestServer::Exchange& exchange) {
          answer(request, exchange);
        }) {}

  std::string url() const { return server_.url(); }
  std::vector<nlohmann::json> reviews() {
    std::lock_guard lock(mutex_);
    return reviews_;
  }

 private:
  void answer(const gpuscale::test::HttpTestRequest& request,
              gpuscale::test::HttpTestServer::Exchange& exchange) {
    auto body = nlohmann::json::parse(request.body, nullptr, false);
    nlohmann::json status;
    if (request.path == "/apis/authentication.k8s.io/v1/tokenreviews") {
      const std::string token = body["spec"].value("token", "");
      status["authenticated"] = token == "alice-token" || token == "bob-token";
      if (status["authenticated"]) {
        status["user"] = {{"username", token.substr(0, token.find('-'))}, {"groups", {"devs"}}};
      }
    } else if (request.path == "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
      {
        std::lock_guard lock(mutex_);
        reviews_.push_back(body["spec"]);
      }
      const auto& spec = body["spec"];
      status["allowed"] = spec.value("user", "") == "alice" &&
                          spec.contains("nonResourceAttributes") &&
                          spec["nonResourceAttributes"].value("path", "") == "/debug/explain" &&
                          spec["nonResourceAttributes"].value("verb", "") == "get";
    } else {
      exchange.respond(404, R"({"kind":"Status","code":404})");
      return;
    }
    body["status"] = status;
    exchange.respond(201, body.dump(), {{"Content-Type", "application/json"}});
  }

  std::mutex mutex_;
  std::vector<nlohmann::json> reviews_;
  gpuscale::test::HttpTestServer server_;
};

TEST_F(AdapterExplainTest, DebugExplainInDelegatedModeNeedsTheNonResourcePermission) {
  FakeDelegationServer kube;
  AdapterProcess delegated(
      stack_->dir.file("rules.yaml"), gpuscale::test::adapterUrl(prometheus_->url()),
      delegationFlags(stack_->dir.file("delegation.kubeconfig"), kube.url()), false);
  const std::string path = "/debug/explain?rule=rules%5B1%5D&sample=false";
  ProcessResult bob = delegated.kubectl(path, "bob-token");
  EXPECT_NE(bob.exitCode, 0);
  EXPECT_TRUE(contains(bob.err, "Error from server (Forbidden)")) << bob.err;
  ProcessResult nobody = delegated.kubectl(path, "unknown-token");
  EXPECT_NE(nobody.exitCode, 0);
  EXPECT_TRUE(contains(nobody.err, "Unauthorized")) << nobody.err;
  ProcessResult alice = delegated.kubectl(path, "alice-token");
  ASSERT_EQ(alice.exitCode, 0) << alice.err << delegated.log();
  EXPECT_EQ(nlohmann::json::parse(alice.out)["rules"][0]["rule"], "rules[1]");

  // kubectl also asks /version; the explain reviews are non-resource {path, verb get}.
  std::set<std::string> explainUsers;
  for (const auto& spec : kube.reviews()) {
    if (!spec.contains("nonResourceAttributes") ||
        spec["nonResourceAttributes"].value("path", "") != "/debug/explain") {
      continue;
    }
    EXPECT_EQ(spec["nonResourceAttributes"]["verb"], "get");
    EXPECT_FALSE(spec.contains("resourceAttributes"));
    explainUsers.insert(spec.value("user", ""));
  }
  EXPECT_EQ(explainUsers, (std::set<std::string>{"alice", "bob"}));
}

// The exposition's metric names: every sample line's name, plus _bucket/_sum/_count of histograms.
std::set<std::string> exportedNames(const std::string& exposition) {
  std::set<std::string> names;
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      names.insert(name);
      if (type == "histogram") {
        for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(name + suffix);
      }
    } else if (!line.empty() && line[0] != '#') {
      names.insert(line.substr(0, line.find_first_of("{ ")));
    }
  }
  return names;
}

// Runs after the outage test below has made the error families appear (gtest keeps order).
TEST_F(AdapterExplainTest, MetricsPerRuleAndMetricAfterAnOutage) {
  ASSERT_EQ(curl(adapter_->url(kNamed)).code, 200);
  HttpReply before = curl(adapter_->url("/metrics"));
  EXPECT_TRUE(contains(before.body, R"(gpuscale_adapter_rule_series{rule="rules[1]"} 2)"))
      << before.body;
  EXPECT_TRUE(contains(before.body, R"(gpuscale_adapter_rule_entries{rule="rules[1]"} 0)"));
  EXPECT_TRUE(contains(
      before.body,
      R"(gpuscale_adapter_metric_queries_total{metric="avg_time_queue_us",rule="rules[0]"})"));
  EXPECT_TRUE(contains(
      before.body,
      R"(gpuscale_adapter_metric_value_age_seconds{metric="avg_time_queue_us",rule="rules[0]"})"));
  EXPECT_TRUE(
      contains(before.body,
               R"(gpuscale_adapter_rule_last_relist_success_timestamp_seconds{rule="rules[0]"})"));

  prometheus_->stop();
  std::this_thread::sleep_for(std::chrono::seconds(3));  // past the cache TTL (2s) and a relist
  EXPECT_EQ(curl(adapter_->url(kNamed)).code, 503);
  HttpReply down = curl(adapter_->url("/metrics"));
  EXPECT_TRUE(contains(
      down.body,
      R"(gpuscale_adapter_metric_query_errors_total{class="unreachable",metric="avg_time_queue_us",rule="rules[0]"} 1)"))
      << down.body;
  EXPECT_TRUE(contains(
      down.body,
      R"(gpuscale_adapter_rule_discovery_errors_total{class="unreachable",rule="rules[0]"})"))
      << down.body;
  EXPECT_TRUE(contains(down.body, R"(gpuscale_adapter_rule_last_error{rule="rules[0]"} 1)"));
  // The last good discovery is still what /metrics reports per rule.
  EXPECT_TRUE(contains(down.body, R"(gpuscale_adapter_rule_series{rule="rules[1]"} 2)"));
  ProcessResult explained = adapter_->kubectl("/debug/explain?output=text&rule=rules%5B0%5D");
  EXPECT_TRUE(contains(explained.out, "adapter discovery at ")) << explained.out;
  EXPECT_TRUE(contains(explained.out,
                       "(unreachable, metric avg_time_queue_us): prometheus connection failed"))
      << explained.out;

  // The dashboard: valid JSON, and every metric name it queries is exported (the two reload
  // gauges come with the rule-file reload change and are accepted until it is merged).
  const char* source = std::getenv("GPUSCALE_SOURCE_DIR");
  ASSERT_NE(source, nullptr);
  std::ifstream file(std::string(source) + "/manifests/grafana/gpuscale-adapter-dashboard.json");
  ASSERT_TRUE(file.good());
  auto dashboard = nlohmann::json::parse(file);
  const std::set<std::string> exported = exportedNames(down.body);
  static const std::regex kName(R"(\b(gpuscale_[a-z0-9_]+))");
  std::set<int> ids;
  size_t queried = 0;
  for (const auto& panel : dashboard.at("panels")) {
    EXPECT_TRUE(ids.insert(panel.at("id").get<int>()).second) << panel.dump();
    if (panel.at("type") == "row") continue;
    ASSERT_FALSE(panel.at("targets").empty()) << panel.dump();
    for (const auto& target : panel.at("targets")) {
      const std::string expr = target.at("expr");
      for (std::sregex_iterator it(expr.begin(), expr.end(), kName), end; it != end; ++it) {
        const std::string name = (*it)[1];
        ++queried;
        EXPECT_TRUE(exported.contains(name)) << name << " in panel " << panel.at("title");
      }
    }
  }
  EXPECT_GT(queried, 20u);

  ASSERT_TRUE(prometheus_->restart().ok()) << prometheus_->logTail();
  EXPECT_TRUE(gpuscale::testing::waitUntil([&] { return curl(adapter_->url(kNamed)).code == 200; },
                                           std::chrono::seconds(60)));
}

}  // namespace adapter_observability_test
}  // namespace gpuscale::adapter::testing
