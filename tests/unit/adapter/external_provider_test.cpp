#include "gpuscale/adapter/external_provider.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cmath>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/errors.h"
#include "rules_fixture.h"

namespace gpuscale::adapter {
namespace external_provider_test {

using testing::compile;
using testing::sample;
using testing::snapshotOf;

constexpr char kRules[] = R"(
externalRules:
- seriesQuery: 'queue_depth{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (queue)'
- seriesQuery: 'cluster_load'
  resources:
    namespaced: false
  metricsQuery: 'scalar(<<.Series>>{<<.LabelMatchers>>})'
)";

constexpr char kDepth[] = R"(sum(queue_depth{namespace="default"}) by (queue))";
constexpr char kLoad[] = R"(scalar(cluster_load{}))";

class ExternalProviderTest : public ::testing::Test {
 protected:
  ExternalProviderTest() {
    auto ruleSet = compile(kRules);
    rules::SeriesByQuery series;
    series[R"(queue_depth{namespace!=""})"] = {{"queue_depth", {"namespace", "queue"}}};
    series["cluster_load"] = {{"cluster_load", {}}};
    snapshot_ = snapshotOf(ruleSet, series);
    provider_ = std::make_unique<ExternalProvider>(
        [this] { return snapshot_; }, std::make_shared<QueryRunner>(prometheus_, nullptr, nullptr),
        registry_);
  }

  std::string exposition() { return prometheus::TextSerializer().Serialize(registry_->Collect()); }

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::shared_ptr<fakes::FakePrometheusClient> prometheus_ =
      std::make_shared<fakes::FakePrometheusClient>();
  std::shared_ptr<const DiscoverySnapshot> snapshot_;
  std::unique_ptr<ExternalProvider> provider_;
};

TEST_F(ExternalProviderTest, ListsMetricNames) {
  auto metrics = provider_->listMetrics();
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_EQ(metrics[0].metric, "cluster_load");
  // Always namespaced, as prometheus-adapter lists them: only the namespaced path exists.
  EXPECT_TRUE(metrics[0].namespaced);
  EXPECT_EQ(metrics[1].metric, "queue_depth");
  EXPECT_TRUE(metrics[1].namespaced);
}

TEST_F(ExternalProviderTest, VectorSamplesBecomeItemsWithTheirLabels) {
  prometheus_->setVector(kDepth, {sample({{"queue", "orders"}}, 42, 1714557600),
                                  sample({{"queue", "mail"}}, std::nan("")),
                                  sample({{"queue", "audit"}}, 0.25, 1714557601)});
  auto items = provider_->getExternalMetric("default", "queue_depth", {});
  ASSERT_TRUE(items.ok()) << items.status().message();
  ASSERT_EQ(items->size(), 2u);  // the NaN sample is left out
  EXPECT_EQ((*items)[0].metricName, "queue_depth");
  EXPECT_EQ((*items)[0].value.toString(), "42");
  ASSERT_TRUE((*items)[0].metricLabels.has_value());
  EXPECT_EQ((*items)[0].metricLabels->at("queue"), "orders");
  EXPECT_EQ((*items)[1].value.toString(), "250m");
  EXPECT_EQ((*items)[1].timestamp, prom::Timestamp(std::chrono::seconds(1714557601)));
}

TEST_F(ExternalProviderTest, ScalarIsOneItemWithoutLabels) {
  auto scalar = std::make_shared<prom::QueryResult>();
  scalar->type = prom::ResultType::kScalar;
  scalar->scalar = {prom::Timestamp(std::chrono::seconds(1714557600)), 3};
  prometheus_->setQuery(kLoad, prom::QueryResultPtr(scalar));
  auto items = provider_->getExternalMetric("other", "cluster_load", {});
  ASSERT_TRUE(items.ok()) << items.status().message();
  ASSERT_EQ(items->size(), 1u);
  EXPECT_FALSE((*items)[0].metricLabels.has_value());
  EXPECT_EQ((*items)[0].value.toString(), "3");
}

TEST_F(ExternalProviderTest, Errors) {
  struct Case {
    std::string what;
    std::string metric;
    prom::Result<prom::QueryResultPtr> answer;
    int code;
    std::string message;
  };
  const prom::QueryResultPtr matrix = testing::emptyAnswer(prom::ResultType::kMatrix);
  const std::vector<Case> cases = {
      {"unknown metric", "nope", testing::vectorAnswer({}), 404,
       "the server could not find the metric nope for namespaces"},
      {"matrix: 500", "queue_depth", matrix, 500, "matrix"},
      {"timeout: 503", "queue_depth", prom::failure(prom::FailureKind::kTimeout, "2s"), 503,
       "unable to fetch metrics: prometheus timeout"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    prometheus_->setQuery(kDepth, c.answer);
    testing::expectFailure(provider_->getExternalMetric("default", c.metric, {}), c.code,
                           c.message);
  }
}

TEST_F(ExternalProviderTest, NoDataIsAnEmptyListCounted) {
  struct Row {
    const char* what;
    prom::Result<prom::QueryResultPtr> answer;
  };
  const std::vector<Row> rows = {
      {"empty vector", testing::vectorAnswer({})},
      {"only NaN", testing::vectorAnswer({sample({{"queue", "q"}}, std::nan(""))})},
      {"only ±Inf (the HPA sums items in int64, a saturated value could wrap)",
       testing::vectorAnswer(
           {sample({{"queue", "q"}}, INFINITY), sample({{"queue", "r"}}, -INFINITY)})},
  };
  for (const Row& row : rows) {
    prometheus_->setQuery(kDepth, row.answer);
    auto items = provider_->getExternalMetric("default", "queue_depth", {});
    ASSERT_TRUE(items.ok()) << row.what << ": " << items.status().message();
    EXPECT_TRUE(items->empty()) << row.what;
  }
  EXPECT_NE(exposition().find("gpuscale_adapter_external_empty_results_total 3"), std::string::npos)
      << exposition();
}

TEST_F(ExternalProviderTest, MetricSelectorGoesBeforeTheNamespace) {
  auto selector = core::LabelSelector::parse("queue in (a,b)");
  ASSERT_TRUE(selector.ok());
  prometheus_->setVector(R"(sum(queue_depth{queue=~"a|b",namespace="default"}) by (queue))",
                         {sample({{"queue", "a"}}, 1)});
  auto items = provider_->getExternalMetric("default", "queue_depth", *selector);
  ASSERT_TRUE(items.ok()) << items.status().message();
  EXPECT_EQ(items->size(), 1u);
}

}  // namespace external_provider_test
}  // namespace gpuscale::adapter
