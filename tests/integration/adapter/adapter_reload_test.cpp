// Rule-file reload and several backends, end to end: the real gpuscale-adapter, two real Debian
// Prometheus servers scraping two exporters that hold different values for the same series (and
// one series only the second has), `hey` as load while the rule file is rewritten (valid, invalid,
// valid), SIGHUP, `explain` and `/debug/explain` per backend, the per-rule series of /metrics
// after a rule is removed, values that are not numbers, and curl/kubectl as clients.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "adapter_process.h"
#include "support/exporter_server.h"
#include "support/prometheus_server.h"

namespace gpuscale::adapter::testing {
namespace adapter_reload_test {

using gpuscale::test::ExporterServer;
using gpuscale::test::PrometheusServer;

constexpr char kPod[] = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/p-1/";

// A rule serving `series` as `metric` for pods, optionally from a named backend and with the
// value transformed (`transform` is appended to the aggregation, e.g. " / 0").
std::string rule(const std::string& series, const std::string& metric,
                 const std::string& backend = "", const std::string& transform = "") {
  return "- seriesQuery: '" + series + "{namespace!=\"\",pod!=\"\"}'\n" +
         (backend.empty() ? "" : "  backend: " + backend + "\n") +
         "  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}\n"
         "  name: {matches: \"" +
         series + "\", as: \"" + metric +
         "\"}\n"
         "  metricsQuery: 'max(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)" +
         transform + "'\n";
}

class AdapterReloadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const char* program : {"prometheus", "kubectl", "hey", "curl"}) {
      if (!gpuscale::testing::programAvailable(program)) return;
    }
    // Same series, different values: which backend answered shows in the value.
    for (auto [exporter, queue] : {std::pair{&exporterA_, 5.0}, std::pair{&exporterB_, 40.0}}) {
      *exporter = new ExporterServer();
      (*exporter)->set("app_queue", {{"namespace", "default"}, {"pod", "p-1"}}, queue);
      (*exporter)->set("app_load", {{"namespace", "default"}, {"pod", "p-1"}}, 7);
    }
    exporterB_->set("app_only_b", {{"namespace", "default"}, {"pod", "p-1"}}, 3);
    auto scraping = [](const ExporterServer* exporter) {
      gpuscale::test::PrometheusServerOptions options;
      options.scrapeTargets = {exporter->target()};
      return PrometheusServer::start(options);
    };
    auto a = scraping(exporterA_);
    auto b = scraping(exporterB_);
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok()) << b.status().message();
    prometheusA_ = a->release();
    prometheusB_ = b->release();
  }
  static void TearDownTestSuite() {
    delete prometheusA_;
    delete prometheusB_;
    delete exporterA_;
    delete exporterB_;
  }
  void SetUp() override {
    if (prometheusB_ == nullptr) GTEST_SKIP() << "prometheus, kubectl, hey or curl not installed";
  }

  // Replaces the rule file atomically (as a ConfigMap update or an editor's rename does).
  void writeRules(const std::string& text) {
    writeFile(dir_.file("next.yaml"), text);
    std::filesystem::rename(dir_.file("next.yaml"), dir_.file("rules.yaml"));
  }
  std::string backends() const {
    return "backends:\n- name: second\n  url: " + prometheusB_->url() +
           "\n  timeout: 5s\n  headers: {X-Scope-OrgID: team-b}\n";
  }

  static int code(const AdapterProcess& adapter, const std::string& metric) {
    return curl(adapter.url(kPod + metric)).code;
  }
  // The value kubectl reads for pod p-1's metric.
  static std::string value(const AdapterProcess& adapter, const std::string& metric) {
    ProcessResult r = adapter.kubectl(kPod + metric);
    std::smatch m;
    if (r.exitCode == 0 && std::regex_search(r.out, m, std::regex(R"re("value":"([^"]+)")re"))) {
      return m[1];
    }
    return "exit " + std::to_string(r.exitCode) + ": " + r.err;
  }
  static bool exposes(const AdapterProcess& adapter, const std::string& line) {
    return curl(adapter.url("/metrics")).body.find(line) != std::string::npos;
  }
  // `explain -o json` of the rule file against the flags' Prometheus (A); the document, or null
  // when the command failed.
  nlohmann::json explainCli() {
    ProcessResult r = runProcess({binary("gpuscale-adapter"), "explain", "--config",
                                  dir_.file("rules.yaml"), "--prometheus-url", prometheusA_->url(),
                                  "--metrics-max-age", "10m", "-o", "json"});
    if (r.exitCode != 0) return nullptr;
    return nlohmann::json::parse(r.out, nullptr, false);
  }
  static bool eventually(const std::function<bool()>& condition) {
    return gpuscale::testing::waitUntil(condition, std::chrono::seconds(60),
                                        std::chrono::milliseconds(100));
  }

  static ExporterServer* exporterA_;
  static ExporterServer* exporterB_;
  static PrometheusServer* prometheusA_;
  static PrometheusServer* prometheusB_;
  gpuscale::testing::TempDir dir_;
};

ExporterServer* AdapterReloadTest::exporterA_ = nullptr;
ExporterServer* AdapterReloadTest::exporterB_ = nullptr;
PrometheusServer* AdapterReloadTest::prometheusA_ = nullptr;
PrometheusServer* AdapterReloadTest::prometheusB_ = nullptr;

TEST_F(AdapterReloadTest, RewritesUnderLoadAnswerEveryRequest) {
  writeRules("rules:\n" + rule("app_queue", "queue_stable") + rule("app_load", "load_old"));
  AdapterProcess adapter(dir_.file("rules.yaml"), prometheusA_->url());
  ASSERT_TRUE(eventually([&] { return code(adapter, "queue_stable") == 200; })) << adapter.log();
  ASSERT_TRUE(eventually([&] { return code(adapter, "load_old") == 200; })) << adapter.log();
  EXPECT_TRUE(exposes(adapter, "gpuscale_config_last_reload_successful 1"));

  // 4 workers at 50 requests/s each on the metric every version of the file keeps.
  BackgroundProcess load({"hey", "-z", "20s", "-c", "4", "-q", "50", "-t", "10",
                          adapter.url(kPod + std::string("queue_stable"))},
                         dir_.file("hey.txt"));

  // 1. Valid: load_old goes, load_new comes.
  writeRules("rules:\n" + rule("app_queue", "queue_stable") + rule("app_load", "load_new"));
  EXPECT_TRUE(eventually([&] { return code(adapter, "load_new") == 200; })) << adapter.log();
  EXPECT_EQ(code(adapter, "load_old"), 404);
  EXPECT_TRUE(exposes(adapter, "gpuscale_config_reloads_total{result=\"success\"} 1"));

  // 2. Invalid (the second rule's regex): rejected with its place, the previous rules stay.
  std::string invalid =
      "rules:\n" + rule("app_queue", "queue_stable") + rule("app_load", "load_new");
  invalid.replace(invalid.rfind("matches: \"app_load\""), 19, "matches: \"app_load(\"");
  writeRules(invalid);
  EXPECT_TRUE(eventually([&] {
    return exposes(adapter, "gpuscale_config_last_reload_successful 0");
  })) << adapter.log();
  EXPECT_TRUE(exposes(adapter, "gpuscale_config_reloads_total{result=\"failure\"} 1"));
  EXPECT_NE(adapter.log().find("rules.yaml:8:19: rules[1].name.matches: unable to compile"),
            std::string::npos)
      << adapter.log();
  EXPECT_EQ(code(adapter, "load_new"), 200);

  // 3. Valid again, now with a second backend.
  writeRules(backends() + "rules:\n" + rule("app_queue", "queue_stable") +
             rule("app_queue", "queue_second", "second"));
  EXPECT_TRUE(eventually([&] { return code(adapter, "queue_second") == 200; })) << adapter.log();
  EXPECT_TRUE(exposes(adapter, "gpuscale_config_last_reload_successful 1"));
  EXPECT_TRUE(exposes(adapter, "gpuscale_config_reloads_total{result=\"success\"} 2"));
  EXPECT_EQ(code(adapter, "load_new"), 404);

  ASSERT_EQ(load.wait(std::chrono::seconds(60)), 0) << load.log();
  const std::string report = load.log();
  std::set<std::string> codes;
  const std::regex status(R"(\[(\d{3})\]\s+(\d+) responses)");
  size_t answered = 0;
  for (auto it = std::sregex_iterator(report.begin(), report.end(), status);
       it != std::sregex_iterator(); ++it) {
    codes.insert((*it)[1]);
    answered += std::stoul((*it)[2]);
  }
  EXPECT_EQ(codes, std::set<std::string>{"200"}) << report;
  EXPECT_EQ(report.find("Error distribution"), std::string::npos) << report;
  EXPECT_GT(answered, 100u) << report;
  std::cout << "requests answered during the reloads: " << answered << " (all 200)\n";
}

TEST_F(AdapterReloadTest, SighupReloadsEvenUnchangedContent) {
  writeRules("rules:\n" + rule("app_queue", "queue_stable"));
  AdapterProcess adapter(dir_.file("rules.yaml"), prometheusA_->url());
  ASSERT_TRUE(eventually([&] { return code(adapter, "queue_stable") == 200; })) << adapter.log();
  adapter.signal(SIGHUP);
  EXPECT_TRUE(eventually([&] {
    return exposes(adapter, "gpuscale_config_reloads_total{result=\"success\"} 1");
  })) << adapter.log();
  EXPECT_NE(adapter.log().find("SIGHUP: reloading"), std::string::npos);
  EXPECT_TRUE(adapter.running());
  EXPECT_EQ(code(adapter, "queue_stable"), 200);
}

TEST_F(AdapterReloadTest, EachRuleIsServedFromItsBackend) {
  writeRules(backends() + "rules:\n" + rule("app_queue", "queue_default") +
             rule("app_queue", "queue_second", "second") +
             rule("app_load", "load_second", "second"));
  AdapterProcess adapter(dir_.file("rules.yaml"), prometheusA_->url());
  ASSERT_TRUE(eventually([&] { return code(adapter, "queue_second") == 200; })) << adapter.log();
  // The same series, 5 in the flags' Prometheus and 40 in the second one.
  EXPECT_EQ(value(adapter, "queue_default"), "5");
  EXPECT_EQ(value(adapter, "queue_second"), "40");
  EXPECT_EQ(value(adapter, "load_second"), "7");
  // Calls are counted per backend.
  HttpReply metrics = curl(adapter.url("/metrics"));
  for (std::string backend : {"default", "second"}) {
    EXPECT_NE(metrics.body.find("gpuscale_adapter_prometheus_requests_total{backend=\"" + backend +
                                "\",endpoint=\"query\",result=\"success\"}"),
              std::string::npos)
        << backend;
  }
}

// Per rule of an explanation: "backend matched sampleValue" ("-" when there is no sample value).
std::vector<std::string> perRule(const nlohmann::json& doc) {
  std::vector<std::string> out;
  if (!doc.is_object() || !doc.contains("rules")) return out;
  for (const auto& rule : doc["rules"]) {
    std::string value = "-";
    if (rule.contains("sample") && !rule["sample"]["values"].empty()) {
      value = rule["sample"]["values"][0].value("value", "?");
    }
    out.push_back(rule.value("rule", "") + " " + rule.value("backend", "") + " " +
                  std::to_string(rule.value("matched", 0)) + " " + value);
  }
  return out;
}

TEST_F(AdapterReloadTest, ExplainAsksEachRulesOwnBackend) {
  writeRules(backends() + "rules:\n" + rule("app_queue", "queue_default") +
             rule("app_queue", "queue_second", "second") +
             rule("app_only_b", "only_b_second", "second") + rule("app_only_b", "only_b_default"));
  // app_queue is 5 in A and 40 in B; app_only_b is only in B, so the default backend finds no
  // metric for rules[3]. Prometheus may still be scraping its first samples: ask until both are in.
  const std::vector<std::string> expected = {"rules[0] default 1 5", "rules[1] second 1 40",
                                             "rules[2] second 1 3", "rules[3] default 0 -"};
  std::vector<std::string> got;
  EXPECT_TRUE(eventually([&] { return (got = perRule(explainCli())) == expected; }))
      << ::testing::PrintToString(got);

  // /debug/explain of the running adapter says the same, from the same backends.
  AdapterProcess adapter(dir_.file("rules.yaml"), prometheusA_->url());
  ASSERT_TRUE(eventually([&] { return code(adapter, "only_b_second") == 200; })) << adapter.log();
  EXPECT_TRUE(eventually([&] {
    ProcessResult r = adapter.kubectl("/debug/explain");
    return r.exitCode == 0 &&
           (got = perRule(nlohmann::json::parse(r.out, nullptr, false))) == expected;
  })) << ::testing::PrintToString(got);
  ProcessResult text = adapter.kubectl("/debug/explain?output=text&rule=rules%5B3%5D");
  EXPECT_NE(text.out.find("  backend:       default\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("not served: the series query matched no metric"), std::string::npos)
      << text.out;
}

TEST_F(AdapterReloadTest, ARemovedRuleLeavesMetrics) {
  writeRules("rules:\n" + rule("app_queue", "queue_stable") + rule("app_load", "load_gone"));
  AdapterProcess adapter(dir_.file("rules.yaml"), prometheusA_->url());
  ASSERT_TRUE(eventually([&] { return code(adapter, "load_gone") == 200; })) << adapter.log();
  ASSERT_EQ(code(adapter, "queue_stable"), 200);
  const std::string goneQueries =
      R"(gpuscale_adapter_metric_queries_total{metric="load_gone",rule="rules[1]"})";
  EXPECT_TRUE(exposes(adapter, goneQueries));
  EXPECT_TRUE(exposes(adapter, R"(gpuscale_adapter_rule_entries{rule="rules[1]"} 2)"));

  writeRules("rules:\n" + rule("app_queue", "queue_stable"));
  EXPECT_TRUE(eventually([&] { return code(adapter, "load_gone") == 404; })) << adapter.log();
  EXPECT_TRUE(eventually([&] { return !exposes(adapter, R"(rule="rules[1]")"); }))
      << curl(adapter.url("/metrics")).body;
  EXPECT_TRUE(exposes(adapter, R"(gpuscale_adapter_rule_entries{rule="rules[0]"} 2)"));
  EXPECT_TRUE(exposes(
      adapter, R"(gpuscale_adapter_metric_queries_total{metric="queue_stable",rule="rules[0]"})"));
}

TEST_F(AdapterReloadTest, AValueThatIsNotANumberIsAMissingObject) {
  // +Inf, -Inf and NaN from PromQL arithmetic on a live series.
  writeRules("rules:\n" + rule("app_queue", "queue_plus_inf", "", " / 0") +
             rule("app_queue", "queue_minus_inf", "", " * -1 / 0") +
             rule("app_queue", "queue_nan", "", " * 0 / 0") + rule("app_queue", "queue"));
  AdapterProcess adapter(dir_.file("rules.yaml"), prometheusA_->url());
  ASSERT_TRUE(eventually([&] { return code(adapter, "queue") == 200; })) << adapter.log();
  for (std::string metric : {"queue_plus_inf", "queue_minus_inf", "queue_nan"}) {
    SCOPED_TRACE(metric);
    // The named pod is NotFound, never "9223372036854775807m".
    ProcessResult named = adapter.kubectl(kPod + metric);
    EXPECT_NE(named.exitCode, 0);
    EXPECT_NE(named.err.find("(NotFound): the server could not find the metric " + metric +
                             " for pods p-1"),
              std::string::npos)
        << named.err;
    // The wildcard leaves the pod out.
    ProcessResult all = adapter.kubectl(
        "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/" + metric);
    EXPECT_EQ(all.exitCode, 0) << all.err;
    EXPECT_NE(all.out.find(R"("items":[])"), std::string::npos) << all.out;
  }
  HttpReply metrics = curl(adapter.url("/metrics"));
  const std::regex counted(
      R"(gpuscale_adapter_(infinite|nan)_values_total\{api="custom"\} ([0-9.e+]+))");
  std::map<std::string, double> left;
  for (auto it = std::sregex_iterator(metrics.body.begin(), metrics.body.end(), counted);
       it != std::sregex_iterator(); ++it) {
    left[(*it)[1]] = std::stod((*it)[2]);
  }
  EXPECT_GE(left["infinite"], 4) << metrics.body;  // two metrics, named and wildcard
  EXPECT_GE(left["nan"], 2) << metrics.body;
}

TEST_F(AdapterReloadTest, AnUnknownBackendStopsTheStartWithItsPlace) {
  writeRules("rules:\n" + rule("app_queue", "queue_default") +
             rule("app_queue", "queue_second", "nowhere"));
  ProcessResult r = runProcess({binary("gpuscale-adapter"), "--config", dir_.file("rules.yaml"),
                                "--standalone", "--prometheus-url", prometheusA_->url(),
                                "--secure-port", "0", "--cert-dir", dir_.file("certs")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(dir_.file("rules.yaml") +
                       ":7:12: rules[1].backend: unknown backend \"nowhere\" (declared: default)"),
            std::string::npos)
      << r.err;
}

}  // namespace adapter_reload_test
}  // namespace gpuscale::adapter::testing
