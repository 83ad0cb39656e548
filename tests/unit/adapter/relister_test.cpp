#include "gpuscale/adapter/relister.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/errors.h"
#include "rules_fixture.h"

namespace gpuscale::adapter {
namespace relister_test {

using testing::compile;

// After the http_requests rule.
constexpr char kMoreRules[] = R"(- seriesQuery: 'http_requests{namespace!="",pod!=""}'
  resources:
    overrides:
      pod: {resource: "pod"}
  name: {matches: "http_requests", as: "requests_copy"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
externalRules:
- seriesQuery: 'queue_depth'
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>})'
)";
constexpr char kPods[] = R"(http_requests{namespace!="",pod!=""})";

class RelisterTest : public ::testing::Test {
 protected:
  RelisterTest() {
    // Discovery first asks for candidate names by the metric-name part of the query.
    prometheus_->setLabelValues("__name__", {"http_requests"},
                                std::vector<std::string>{"http_requests"});
    prometheus_->setLabelValues("__name__", {kPods}, std::vector<std::string>{"http_requests"});
    prometheus_->setLabelNames({kPods}, std::vector<std::string>{"__name__", "namespace", "pod"});
    prometheus_->setLabelValues("__name__", {"queue_depth"},
                                std::vector<std::string>{"queue_depth"});
    prometheus_->setLabelNames({"queue_depth"}, std::vector<std::string>{"__name__", "queue"});
  }

  std::vector<std::string> customNames(const Relister& relister) {
    return testing::customMetricNames(*relister.snapshot());
  }

  std::string exposition() { return prometheus::TextSerializer().Serialize(registry_->Collect()); }

  std::shared_ptr<fakes::FakePrometheusClient> prometheus_ =
      std::make_shared<fakes::FakePrometheusClient>();
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::shared_ptr<const rules::RuleSet> rules_ = compile(testing::kHttpRequestsRules + kMoreRules);
};

TEST_F(RelisterTest, EmptyAndNotReadyBeforeTheFirstDiscovery) {
  Relister relister(rules_, prometheus_, {}, registry_);
  EXPECT_FALSE(relister.ready());
  EXPECT_TRUE(relister.snapshot()->custom->entries().empty());
  EXPECT_TRUE(relister.snapshot()->external->entries().empty());
}

TEST_F(RelisterTest, DiscoversEachDistinctQueryOnce) {
  Relister relister(rules_, prometheus_, {}, registry_);
  ASSERT_TRUE(relister.relistOnce().ok());
  EXPECT_TRUE(relister.ready());
  EXPECT_EQ(customNames(relister),
            (std::vector<std::string>{"namespaces/http_requests", "pods/http_requests",
                                      "pods/requests_copy"}));
  ASSERT_EQ(relister.snapshot()->external->entries().size(), 1u);
  EXPECT_EQ(prometheus_->calls(std::string("values:__name__|") + kPods), 1u);
  EXPECT_NE(exposition().find("gpuscale_adapter_registry_metrics{api=\"custom\"} 3"),
            std::string::npos);
}

TEST_F(RelisterTest, AFailureKeepsTheLastGoodRegistry) {
  Relister relister(rules_, prometheus_, {}, registry_);
  ASSERT_TRUE(relister.relistOnce().ok());
  prometheus_->setLabelValues("__name__", {kPods},
                              prom::failure(prom::FailureKind::kConnection, "refused"));
  core::Status failed = relister.relistOnce();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("refused"), std::string::npos);
  EXPECT_EQ(customNames(relister).size(), 3u);  // kept
  EXPECT_TRUE(relister.ready());
  std::string metrics = exposition();
  EXPECT_NE(metrics.find("gpuscale_adapter_rule_last_error{rule=\"rules[0]\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.find("gpuscale_adapter_rule_last_error{rule=\"externalRules[0]\"} 0"),
            std::string::npos);
  EXPECT_NE(metrics.find("gpuscale_adapter_relists_total{result=\"failure\"} 1"),
            std::string::npos);

  prometheus_->setLabelValues("__name__", {kPods}, std::vector<std::string>{});
  ASSERT_TRUE(relister.relistOnce().ok());
  EXPECT_TRUE(customNames(relister).empty());  // recovered: the series are gone now
}

TEST_F(RelisterTest, RuleStatusRecordsEachRulesDiscovery) {
  auto status = std::make_shared<RuleStatus>(registry_);
  Relister relister(rules_, prometheus_, {}, registry_, status);
  ASSERT_TRUE(relister.relistOnce().ok());
  EXPECT_TRUE(status->state("rules[1]").lastRelistSuccess.has_value());
  EXPECT_TRUE(status->state("externalRules[0]").lastRelistSuccess.has_value());
  prometheus_->setLabelValues("__name__", {kPods},
                              prom::failure(prom::FailureKind::kTimeout, "2s"));
  EXPECT_FALSE(relister.relistOnce().ok());
  // Both custom rules share the failing seriesQuery; the external rule's own query succeeded.
  for (std::string rule : {"rules[0]", "rules[1]"}) {
    ASSERT_TRUE(status->state(rule).lastDiscoveryError.has_value()) << rule;
    EXPECT_EQ(status->state(rule).lastDiscoveryError->errorClass, "timeout");
  }
  EXPECT_FALSE(status->state("externalRules[0]").lastDiscoveryError.has_value());
  EXPECT_NE(
      exposition().find(
          R"(gpuscale_adapter_rule_discovery_errors_total{class="timeout",rule="rules[1]"} 1)"),
      std::string::npos);
}

TEST_F(RelisterTest, SeriesOfWhatIsNoLongerServedLeaveMetrics) {
  auto status = std::make_shared<RuleStatus>(registry_);
  Relister relister(rules_, prometheus_, {}, registry_, status);
  ASSERT_TRUE(relister.relistOnce().ok());
  const auto now = std::chrono::system_clock::now();
  status->querySucceeded({"rules[0]", "http_requests"}, prom::QueryResult{}, now);
  status->querySucceeded({"externalRules[0]", "queue_depth"}, prom::QueryResult{}, now);

  // queue_depth disappears from Prometheus: the next run's registry lacks it, so do its series.
  prometheus_->setLabelValues("__name__", {"queue_depth"}, std::vector<std::string>{});
  ASSERT_TRUE(relister.relistOnce().ok());
  relister.removeStaleSeries();
  std::string text = exposition();
  EXPECT_EQ(text.find(R"(metric="queue_depth")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(metric="http_requests")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(gpuscale_adapter_rule_entries{rule="externalRules[0]"} 0)"),
            std::string::npos)
      << text;

  // A relister of fewer rules on the same registry (a reload) removes the other rules' series.
  Relister fewer(compile(R"(
rules:
- seriesQuery: 'http_requests{namespace!="",pod!=""}'
  resources: {overrides: {pod: {resource: "pod"}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
)"),
                 prometheus_, {}, registry_, status);
  ASSERT_TRUE(fewer.relistOnce().ok());
  fewer.removeStaleSeries();
  text = exposition();
  for (std::string gone : {R"(rule="rules[1]")", R"(rule="externalRules[0]")"}) {
    EXPECT_EQ(text.find(gone), std::string::npos) << gone << "\n" << text;
  }
  EXPECT_NE(text.find(R"(gpuscale_adapter_rule_entries{rule="rules[0]"} 1)"), std::string::npos)
      << text;
}

TEST_F(RelisterTest, NotReadyWhileDiscoveryHasNeverSucceeded) {
  prometheus_->setDefaultError(prom::failure(prom::FailureKind::kConnection, "refused"));
  prometheus_->setLabelValues("__name__", {kPods},
                              prom::failure(prom::FailureKind::kConnection, "refused"));
  Relister relister(rules_, prometheus_, {}, registry_);
  EXPECT_FALSE(relister.relistOnce().ok());
  EXPECT_FALSE(relister.ready());
}

TEST_F(RelisterTest, BackgroundThreadRunsAtOnceAndStops) {
  RelistOptions options;
  options.interval = std::chrono::hours(1);
  Relister relister(rules_, prometheus_, options, registry_);
  relister.start();
  for (int i = 0; i < 500 && !relister.ready(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(relister.ready());
  relister.stop();  // returns although the next run is an hour away
}

TEST(ResolveRelistOptions, MaxAgeRules) {
  auto rules = compile(testing::kHttpRequestsRules + kMoreRules);
  struct Case {
    std::string what;
    core::Duration interval, maxAge;
    bool ok;
    core::Duration effectiveMaxAge;
  };
  using std::chrono::seconds;
  const std::vector<Case> cases = {
      {"0 means the interval", seconds(60), seconds(0), true, seconds(60)},
      {"longer is fine", seconds(60), seconds(120), true, seconds(120)},
      {"shorter is an error with custom rules", seconds(60), seconds(30), false, {}},
      {"a zero interval is an error", seconds(0), seconds(0), false, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    RelistOptions options;
    options.interval = c.interval;
    options.maxAge = c.maxAge;
    auto resolved = resolveRelistOptions(options, *rules);
    ASSERT_EQ(resolved.ok(), c.ok);
    if (c.ok) {
      EXPECT_EQ(resolved->maxAge, c.effectiveMaxAge);
    }
  }
}

}  // namespace relister_test
}  // namespace gpuscale::adapter
