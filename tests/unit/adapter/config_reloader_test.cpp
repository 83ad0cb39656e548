#include "gpuscale/adapter/config_reloader.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <filesystem>
#include <fstream>

#include "fakes/prom_fake_client.h"
#include "gpuscale/adapter/query_runner.h"
#include "gpuscale/prom/errors.h"
#include "rules_fixture.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace gpuscale::adapter {
namespace config_reloader_test {

constexpr char kFirst[] = R"(rules:
- seriesQuery: 'a_total{namespace!="",pod!=""}'
  resources: {template: "<<.Resource>>"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
)";

// The second rule's regex does not compile.
constexpr char kInvalid[] = R"(rules:
- seriesQuery: 'a_total{namespace!="",pod!=""}'
  resources: {template: "<<.Resource>>"}
- seriesQuery: 'b_total{namespace!="",pod!=""}'
  resources: {template: "<<.Resource>>"}
  name:
    matches: "b_(total"
)";

constexpr char kSecond[] = R"(backends:
- name: thanos
  url: http://thanos.invalid:10902
  headers: {X-Scope-OrgID: team-a}
rules:
- seriesQuery: 'b_total{namespace!="",pod!=""}'
  backend: thanos
  resources: {template: "<<.Resource>>"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
)";

constexpr char kAQuery[] = R"(a_total{namespace!="",pod!=""})";
constexpr char kBQuery[] = R"(b_total{namespace!="",pod!=""})";

class ConfigReloaderTest : public ::testing::Test {
 protected:
  ConfigReloaderTest() {
    fallback_->setDiscoverable(kAQuery, "a_total", {"namespace", "pod"});
    thanos_->setDiscoverable(kBQuery, "b_total", {"namespace", "pod"});
    write(kFirst);
  }

  void write(const std::string& text) {
    std::ofstream(dir_.file("next.yaml")) << text;
    std::filesystem::rename(dir_.file("next.yaml"), dir_.file("rules.yaml"));
  }

  core::Result<std::shared_ptr<ConfigReloader>> create(ConfigWatcherOptions watch = {}) {
    ReloadSettings settings;
    settings.watch = watch;
    settings.configFile = dir_.file("rules.yaml");
    settings.registry = registry_;
    settings.status = status_;
    settings.relist.interval = std::chrono::hours(1);
    settings.credentialFiles = credentialFiles_;
    settings.makeBackend = [this](const std::string& name, const prom::PrometheusOptions& options)
        -> core::Result<std::shared_ptr<const Backend>> {
      made_.emplace_back(name, options);
      auto fake = name == "thanos" ? thanos_ : fallback_;
      return std::make_shared<const Backend>(name, fake, fake, nullptr);
    };
    return ConfigReloader::create(std::move(settings));
  }

  static std::vector<std::string> metrics(const ConfigReloader& reloader) {
    return testing::customMetricNames(*reloader.snapshot());
  }

  std::string exposition() { return prometheus::TextSerializer().Serialize(registry_->Collect()); }
  bool exposes(const std::string& line) { return exposition().find(line) != std::string::npos; }

  gpuscale::testing::TempDir dir_;
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::shared_ptr<RuleStatus> status_ = std::make_shared<RuleStatus>(registry_);
  std::shared_ptr<fakes::FakePrometheusClient> fallback_ =
      std::make_shared<fakes::FakePrometheusClient>();
  std::shared_ptr<fakes::FakePrometheusClient> thanos_ =
      std::make_shared<fakes::FakePrometheusClient>();
  std::vector<std::pair<std::string, prom::PrometheusOptions>> made_;
  std::shared_ptr<const CredentialFilePolicy> credentialFiles_;
};

TEST_F(ConfigReloaderTest, AnInvalidFileKeepsTheOldRulesAndSaysWhere) {
  auto reloader = create();
  ASSERT_TRUE(reloader.ok()) << reloader.status().message();
  EXPECT_TRUE(exposes("gpuscale_config_last_reload_successful 1"));
  auto before = (*reloader)->rules();

  write(kInvalid);
  core::Status status = (*reloader)->reload();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.httpCode(), 422);
  EXPECT_EQ(status.message().rfind(dir_.file("rules.yaml") + ":7:14: rules[1].name.matches: ", 0),
            0u)
      << status.message();
  EXPECT_EQ((*reloader)->rules(), before);
  EXPECT_TRUE(exposes("gpuscale_config_last_reload_successful 0"));
  EXPECT_TRUE(exposes("gpuscale_config_reloads_total{result=\"failure\"} 1"));
}

TEST_F(ConfigReloaderTest, AValidFileSwapsRulesAndBackendsAsOneGeneration) {
  auto reloader = create();
  ASSERT_TRUE(reloader.ok()) << reloader.status().message();
  ASSERT_EQ((*reloader)->snapshot()->backends->all().size(), 1u);
  // The first generation is discovered by the relist loop; do its first run here.
  write(kFirst);
  ASSERT_TRUE((*reloader)->reload().ok());
  EXPECT_EQ(metrics(**reloader), (std::vector<std::string>{"namespaces/a_total", "pods/a_total"}));
  std::shared_ptr<const DiscoverySnapshot> inFlight = (*reloader)->snapshot();

  write(kSecond);
  ASSERT_TRUE((*reloader)->reload().ok());
  EXPECT_TRUE((*reloader)->ready());
  EXPECT_EQ(metrics(**reloader), (std::vector<std::string>{"namespaces/b_total", "pods/b_total"}));
  // b_total was discovered on its backend, which got the file's options.
  EXPECT_EQ(thanos_->calls(std::string("values:__name__|") + kBQuery), 1u);
  EXPECT_EQ(fallback_->calls(std::string("values:__name__|") + kBQuery), 0u);
  ASSERT_EQ(made_.back().first, "thanos");
  EXPECT_EQ(made_.back().second.url, "http://thanos.invalid:10902");
  EXPECT_EQ(made_.back().second.headers,
            (std::vector<std::pair<std::string, std::string>>{{"X-Scope-OrgID", "team-a"}}));
  // The default backend is built once, not per reload.
  EXPECT_EQ(
      std::count_if(made_.begin(), made_.end(), [](const auto& m) { return m.first == "default"; }),
      1);

  // Queries of the new rule go to its backend.
  auto snapshot = (*reloader)->snapshot();
  const rules::CompiledRule& rule = (*reloader)->rules()->rules[0];
  ASSERT_NE(snapshot->backendFor(rule), nullptr);
  EXPECT_EQ(snapshot->backendFor(rule)->name(), "thanos");
  QueryRunner runner(fallback_, nullptr, nullptr);
  ASSERT_TRUE(
      runner.run(snapshot->backendFor(rule), "sum(b_total)", {prom::ResultType::kVector}).ok());
  EXPECT_EQ(thanos_->calls("query:sum(b_total)"), 1u);
  EXPECT_EQ(fallback_->calls("query:sum(b_total)"), 0u);

  // A request that took its snapshot before the reload still sees the old rules.
  EXPECT_EQ(inFlight->custom->entries().size(), 2u);
  EXPECT_EQ(inFlight->custom->entries()[0].info.metric, "a_total");
  EXPECT_TRUE(exposes("gpuscale_config_last_reload_successful 1"));
  EXPECT_TRUE(exposes("gpuscale_config_reloads_total{result=\"success\"} 2"));
  (*reloader)->stop();
}

TEST_F(ConfigReloaderTest, ANewBackendThatDoesNotAnswerKeepsTheOldRules) {
  auto reloader = create();
  ASSERT_TRUE(reloader.ok()) << reloader.status().message();
  ASSERT_TRUE((*reloader)->reload().ok());
  thanos_->setLabelValues("__name__", {kBQuery},
                          prom::failure(prom::FailureKind::kConnection, "connection refused"));
  write(kSecond);
  core::Status status = (*reloader)->reload();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.httpCode(), 503);  // the watcher retries these
  EXPECT_NE(status.message().find("of backend thanos"), std::string::npos) << status.message();
  EXPECT_EQ(metrics(**reloader), (std::vector<std::string>{"namespaces/a_total", "pods/a_total"}));
  EXPECT_TRUE(exposes("gpuscale_config_last_reload_successful 0"));
  (*reloader)->stop();
}

// A rule serving `series` from the default backend.
std::string defaultRule(const std::string& series) {
  return "- seriesQuery: '" + series +
         "{namespace!=\"\",pod!=\"\"}'\n"
         "  resources: {template: \"<<.Resource>>\"}\n"
         "  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'\n";
}

TEST_F(ConfigReloaderTest, SeriesOfRulesAndMetricsThatAreGoneLeaveMetrics) {
  fallback_->setDiscoverable(kBQuery, "b_total", {"namespace", "pod"});
  write("rules:\n" + defaultRule("a_total") + defaultRule("b_total"));
  auto reloader = create();
  ASSERT_TRUE(reloader.ok()) << reloader.status().message();
  ASSERT_TRUE((*reloader)->reload().ok());
  const auto now = std::chrono::system_clock::now();
  const prom::QueryResult answered;  // an empty vector
  status_->querySucceeded({"rules[0]", "a_total"}, answered, now);
  status_->querySucceeded({"rules[1]", "b_total"}, answered, now);
  status_->queryFailed({"rules[1]", "b_total"}, prom::failure(prom::FailureKind::kTimeout, "2s"),
                       now);
  const std::vector<std::string> ruleOne = {
      R"(gpuscale_adapter_rule_entries{rule="rules[1]"} 2)",
      R"(gpuscale_adapter_rule_series{rule="rules[1]"} 1)",
      R"(gpuscale_adapter_rule_last_error{rule="rules[1]"} 0)",
      R"(gpuscale_adapter_rule_last_relist_success_timestamp_seconds{rule="rules[1]"})",
      R"(gpuscale_adapter_metric_queries_total{metric="b_total",rule="rules[1]"} 2)",
      R"(gpuscale_adapter_metric_query_errors_total{class="timeout",metric="b_total",rule="rules[1]"} 1)",
      R"(gpuscale_adapter_metric_empty_results_total{metric="b_total",rule="rules[1]"} 1)",
      R"(gpuscale_adapter_metric_value_age_seconds{metric="b_total",rule="rules[1]"})",
  };
  for (const std::string& line : ruleOne) EXPECT_TRUE(exposes(line)) << line << exposition();

  // 1. The reload removes rules[1]: none of its series remain; rules[0]'s stay as they were.
  write("rules:\n" + defaultRule("a_total"));
  ASSERT_TRUE((*reloader)->reload().ok());
  EXPECT_FALSE(exposes(R"(rule="rules[1]")")) << exposition();
  EXPECT_EQ(status_->state("rules[1]").queries, 0u);
  EXPECT_TRUE(exposes(R"(gpuscale_adapter_rule_entries{rule="rules[0]"} 2)")) << exposition();
  EXPECT_TRUE(
      exposes(R"(gpuscale_adapter_metric_queries_total{metric="a_total",rule="rules[0]"} 1)"))
      << exposition();

  // 2. rules[0] now serves another metric: the series of the metric it no longer has go.
  write("rules:\n" + defaultRule("b_total"));
  ASSERT_TRUE((*reloader)->reload().ok());
  EXPECT_FALSE(exposes(R"(metric="a_total")")) << exposition();
  EXPECT_TRUE(exposes(R"(gpuscale_adapter_rule_entries{rule="rules[0]"} 2)")) << exposition();

  // 3. A candidate rejected after its first discovery leaves no series of its rules behind.
  thanos_->setLabelValues("__name__", {kBQuery},
                          prom::failure(prom::FailureKind::kConnection, "connection refused"));
  write(std::string(kSecond) + defaultRule("c_total"));
  EXPECT_FALSE((*reloader)->reload().ok());
  EXPECT_FALSE(exposes(R"(rule="rules[1]")")) << exposition();
  EXPECT_TRUE(exposes(R"(gpuscale_adapter_rule_entries{rule="rules[0]"} 2)")) << exposition();
  (*reloader)->stop();
}

TEST_F(ConfigReloaderTest, AChangeBetweenLoadAndWatchIsNotMissed) {
  ConfigWatcherOptions watch;
  watch.pollInterval =
      std::chrono::milliseconds(20);  // no event follows the change: the poll sees it
  watch.sighup = false;
  auto reloader = create(watch);
  ASSERT_TRUE(reloader.ok()) << reloader.status().message();
  write(kSecond);
  (*reloader)->start();
  EXPECT_TRUE(gpuscale::testing::waitUntil(
      [&] { return (*reloader)->rules()->rules[0].backend() == "thanos"; },
      std::chrono::seconds(20)));
  (*reloader)->stop();
}

TEST_F(ConfigReloaderTest, AnInvalidFileAtStartIsAnError) {
  write(kInvalid);
  auto reloader = create();
  ASSERT_FALSE(reloader.ok());
  EXPECT_NE(reloader.status().message().find(":7:14: rules[1].name.matches: "), std::string::npos);
}

// kSecond with the thanos backend's token read from `tokenFile`.
std::string withTokenFile(const std::string& tokenFile) {
  std::string text = kSecond;
  const std::string anchor = "  headers: {X-Scope-OrgID: team-a}\n";
  text.insert(text.find(anchor) + anchor.size(), "  bearerTokenFile: " + tokenFile + "\n");
  return text;
}

TEST_F(ConfigReloaderTest, ACredentialFileOutsideTheAllowedDirectoriesKeepsTheOldRules) {
  std::filesystem::create_directory(dir_.file("secrets"));
  std::ofstream(dir_.file("secrets/thanos-token")) << "t";
  std::ofstream(dir_.file("adapter-token")) << "t";
  auto policy = CredentialFilePolicy::create({dir_.file("secrets")}, {}, registry_);
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  credentialFiles_ = *policy;
  auto reloader = create();
  ASSERT_TRUE(reloader.ok()) << reloader.status().message();
  auto before = (*reloader)->rules();

  for (const std::string& escape :
       {dir_.file("adapter-token"), dir_.file("secrets/../adapter-token")}) {
    write(withTokenFile(escape));
    core::Status status = (*reloader)->reload();
    ASSERT_FALSE(status.ok()) << escape;
    EXPECT_NE(status.message().find("backends[0].bearerTokenFile: credential file"),
              std::string::npos)
        << status.message();
    EXPECT_EQ((*reloader)->rules(), before);
  }
  EXPECT_TRUE(made_.size() == 1u) << "no backend was built for a rejected file";
  EXPECT_TRUE(exposes("gpuscale_config_last_reload_successful 0"));
  EXPECT_TRUE(exposes("gpuscale_config_rejected_credential_files_total 2"));

  write(withTokenFile(dir_.file("secrets/thanos-token")));
  ASSERT_TRUE((*reloader)->reload().ok());
  EXPECT_NE((*reloader)->rules(), before);
  EXPECT_EQ(made_.back().second.tokenFile, dir_.file("secrets/thanos-token"));
}

TEST_F(ConfigReloaderTest, ACredentialFileOutsideAtStartIsAnError) {
  std::ofstream(dir_.file("adapter-token")) << "t";
  auto policy = CredentialFilePolicy::create({}, {}, registry_);
  ASSERT_TRUE(policy.ok());
  credentialFiles_ = *policy;
  write(withTokenFile(dir_.file("adapter-token")));
  auto reloader = create();
  ASSERT_FALSE(reloader.ok());
  EXPECT_NE(reloader.status().message().find("bearerTokenFile"), std::string::npos);
}

}  // namespace config_reloader_test
}  // namespace gpuscale::adapter
