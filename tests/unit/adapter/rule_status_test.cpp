#include "gpuscale/adapter/rule_status.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "gpuscale/prom/errors.h"

namespace gpuscale::adapter {
namespace rule_status_test {

using Clock = std::chrono::system_clock;

TEST(RuleStatus, ErrorClasses) {
  struct Row {
    core::Status error;
    std::string_view errorClass;
  };
  const std::vector<Row> rows = {
      {prom::failure(prom::FailureKind::kConnection, "refused"), "unreachable"},
      {prom::failure(prom::FailureKind::kTimeout, "2s"), "timeout"},
      {prom::failure(prom::FailureKind::kHttpStatus, "418"), "bad_response"},
      {prom::failure(prom::FailureKind::kBadJson, "x"), "bad_response"},
      {prom::failure(prom::FailureKind::kBodyTooLarge, "x"), "bad_response"},
      {prom::failure(prom::FailureKind::kUnexpectedResultType, "matrix"), "bad_response"},
      {prom::failure(prom::FailureKind::kPrometheusError, "bad_data"), "prometheus_error"},
      {prom::failure(prom::FailureKind::kCredentials, "token"), "credentials"},
      {core::Status::internal("something else"), "other"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(errorClassOf(row.error), row.errorClass) << row.error.message();
    EXPECT_NE(std::find(kErrorClasses.begin(), kErrorClasses.end(), row.errorClass),
              kErrorClasses.end());
  }
}

class RuleStatusTest : public ::testing::Test {
 protected:
  std::string exposition() { return prometheus::TextSerializer().Serialize(registry_->Collect()); }
  bool has(const std::string& line) { return exposition().find(line) != std::string::npos; }

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  const Clock::time_point now_ = Clock::time_point(std::chrono::seconds(1'800'000'000));
};

TEST_F(RuleStatusTest, DiscoveryPerRule) {
  RuleStatus status(registry_);
  status.discoveryFailed("rules[0]", prom::failure(prom::FailureKind::kConnection, "refused"),
                         now_);
  EXPECT_TRUE(has(
      R"(gpuscale_adapter_rule_discovery_errors_total{class="unreachable",rule="rules[0]"} 1)"));
  EXPECT_TRUE(
      has(R"(gpuscale_adapter_rule_last_relist_success_timestamp_seconds{rule="rules[0]"} 0)"));
  ASSERT_TRUE(status.state("rules[0]").lastDiscoveryError.has_value());
  EXPECT_EQ(status.state("rules[0]").lastDiscoveryError->errorClass, "unreachable");

  status.discoverySucceeded("rules[0]", now_);
  EXPECT_TRUE(has(
      R"(gpuscale_adapter_rule_last_relist_success_timestamp_seconds{rule="rules[0]"} 1800000000)"));
  EXPECT_FALSE(status.state("rules[0]").lastDiscoveryError.has_value());
  EXPECT_EQ(status.state("rules[0]").lastRelistSuccess, now_);
}

TEST_F(RuleStatusTest, QueriesEmptyResultsErrorsAndValueAge) {
  RuleStatus status(registry_);
  const QueryOrigin origin{"rules[1]", "queue_time"};
  prom::QueryResult data;
  data.vector = {{{{"pod", "a"}}, {now_ - std::chrono::seconds(3), 1}},
                 {{{"pod", "b"}}, {now_ - std::chrono::seconds(7), 2}}};
  status.querySucceeded(origin, data, now_);
  status.querySucceeded(origin, prom::QueryResult{}, now_);
  status.queryFailed(origin, prom::failure(prom::FailureKind::kTimeout, "2s"), now_);
  const std::string labels = R"(metric="queue_time",rule="rules[1]")";
  EXPECT_TRUE(has("gpuscale_adapter_metric_queries_total{" + labels + "} 3"));
  EXPECT_TRUE(has("gpuscale_adapter_metric_empty_results_total{" + labels + "} 1"));
  EXPECT_TRUE(
      has(R"(gpuscale_adapter_metric_query_errors_total{class="timeout",)" + labels + "} 1"));
  // The newest sample served was 3 s old; the empty answer leaves the gauge as it was.
  EXPECT_TRUE(has("gpuscale_adapter_metric_value_age_seconds{" + labels + "} 3"));
  RuleState state = status.state("rules[1]");
  EXPECT_EQ(state.queries, 3u);
  EXPECT_EQ(state.emptyResults, 1u);
  EXPECT_EQ(state.queryErrors, 1u);
  ASSERT_TRUE(state.lastQueryError.has_value());
  EXPECT_EQ(state.lastQueryError->metric, "queue_time");
}

TEST_F(RuleStatusTest, MetricLabelsAreBounded) {
  RuleStatus status(registry_, 2);
  for (std::string metric : {"m1", "m2", "m3", "m4"}) {
    status.querySucceeded({"rules[0]", metric}, prom::QueryResult{}, now_);
  }
  EXPECT_TRUE(has(R"(gpuscale_adapter_metric_queries_total{metric="m2",rule="rules[0]"} 1)"));
  EXPECT_FALSE(has(R"(metric="m3")"));
  EXPECT_TRUE(
      has(R"x(gpuscale_adapter_metric_queries_total{metric="(other)",rule="rules[0]"} 2)x"));
}

TEST_F(RuleStatusTest, RetainForgetsRulesAndMetricsThatAreGone) {
  RuleStatus status(registry_, 3);
  status.discoverySucceeded("rules[0]", now_);
  status.discoveryFailed("rules[1]", prom::failure(prom::FailureKind::kTimeout, "2s"), now_);
  for (std::string metric : {"kept", "gone", "m3", "m4"}) {  // m4 is counted as (other)
    status.queryFailed({"rules[0]", metric}, prom::failure(prom::FailureKind::kTimeout, "2s"),
                       now_);
  }
  status.querySucceeded({"rules[1]", "other_rule"}, prom::QueryResult{}, now_);

  status.retain({"rules[0]"}, {{"rules[0]", "kept"}});
  const std::string text = exposition();
  // rules[1] is gone everywhere, its state too.
  EXPECT_EQ(text.find(R"(rule="rules[1]")"), std::string::npos) << text;
  EXPECT_EQ(status.state("rules[1]").queries, 0u);
  EXPECT_FALSE(status.state("rules[1]").lastDiscoveryError.has_value());
  // rules[0] keeps its served metric and its (other) pair; the others leave every family.
  EXPECT_EQ(text.find(R"(metric="gone")"), std::string::npos) << text;
  EXPECT_EQ(text.find(R"(metric="m3")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(gpuscale_adapter_metric_queries_total{metric="kept",rule="rules[0]"} 1)"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          R"x(gpuscale_adapter_metric_query_errors_total{class="timeout",metric="(other)",rule="rules[0]"} 1)x"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(R"(gpuscale_adapter_rule_last_relist_success_timestamp_seconds{rule="rules[0]"})"),
      std::string::npos);
  EXPECT_EQ(status.state("rules[0]").queries, 4u);

  // A freed slot is used again: a new metric gets its own series instead of (other).
  status.querySucceeded({"rules[0]", "new"}, prom::QueryResult{}, now_);
  EXPECT_TRUE(has(R"(gpuscale_adapter_metric_queries_total{metric="new",rule="rules[0]"} 1)"));
}

TEST_F(RuleStatusTest, WithoutRegistryStateIsStillKept) {
  RuleStatus status(nullptr);
  status.queryFailed({"rules[0]", "m"}, core::Status::internal("x"), now_);
  EXPECT_EQ(status.state("rules[0]").queryErrors, 1u);
  EXPECT_EQ(status.state("rules[9]").queries, 0u);
}

}  // namespace rule_status_test
}  // namespace gpuscale::adapter
