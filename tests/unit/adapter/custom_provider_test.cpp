#include "gpuscale/adapter/custom_provider.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <limits>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/errors.h"
#include "rules_fixture.h"

namespace gpuscale::adapter {
namespace custom_provider_test {

using testing::compile;
using testing::sample;
using testing::snapshotOf;
using testing::vectorAnswer;

// Lists the names it was given (or everything), recording what it was asked.
class FixedObjectLister final : public ObjectLister {
 public:
  ObjectSet objects = ObjectSet::everything();
  core::Result<ObjectSet> list(const k8s::ResourceInfo&, std::string_view,
                               const core::LabelSelector&) override {
    ++calls;
    return objects;
  }
  int calls = 0;
};

class CustomProviderTest : public ::testing::Test {
 protected:
  CustomProviderTest() {
    auto ruleSet = compile(testing::kHttpRequestsRules);
    rules::SeriesByQuery series;
    series[R"(http_requests{namespace!="",pod!=""})"] = {{"http_requests", {"namespace", "pod"}}};
    snapshot_ = snapshotOf(ruleSet, series);
    runner_ = std::make_shared<QueryRunner>(prometheus_, nullptr, registry_);
    provider_ = std::make_unique<CustomProvider>([this] { return snapshot_; },
                                                 k8s::BuiltinResourceTable::instance(), lister_,
                                                 runner_, CustomProviderOptions{3, 16 * 1024});
  }

  core::Result<apiserver::MetricValue> named(const std::string& pod,
                                             const std::string& metric = "http_requests") {
    return provider_->getMetricByName("default", pod, {{"", "pods"}, true, metric}, {});
  }
  core::Result<std::vector<apiserver::MetricValue>> wildcard() {
    return provider_->getMetricBySelector("default", {}, {{"", "pods"}, true, "http_requests"}, {});
  }
  static std::vector<std::string> names(const std::vector<apiserver::MetricValue>& items) {
    std::vector<std::string> out;
    for (const auto& item : items) out.push_back(item.describedObject.name);
    return out;
  }

  std::string exposition() { return prometheus::TextSerializer().Serialize(registry_->Collect()); }

  std::shared_ptr<fakes::FakePrometheusClient> prometheus_ =
      std::make_shared<fakes::FakePrometheusClient>();
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::shared_ptr<FixedObjectLister> lister_ = std::make_shared<FixedObjectLister>();
  std::shared_ptr<const DiscoverySnapshot> snapshot_;
  std::shared_ptr<QueryRunner> runner_;
  std::unique_ptr<CustomProvider> provider_;
};

constexpr char kOnePod[] = R"(sum(http_requests{namespace="default",pod="web-1"}) by (pod))";
constexpr char kAllPods[] = R"(sum(http_requests{namespace="default",pod!=""}) by (pod))";

TEST_F(CustomProviderTest, ListsTheRegistry) {
  auto metrics = provider_->listMetrics();
  ASSERT_EQ(metrics.size(), 2u);  // pods (namespaced) and namespaces (not namespaced)
  EXPECT_EQ(metrics[0].resource.toString(), "namespaces");
  EXPECT_FALSE(metrics[0].namespaced);
  EXPECT_EQ(metrics[1].resource.toString(), "pods");
  EXPECT_TRUE(metrics[1].namespaced);
}

TEST_F(CustomProviderTest, NamedObjectValue) {
  prometheus_->setVector(kOnePod, {sample({{"pod", "web-1"}}, 0.5)});
  auto value = named("web-1");
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value->value.toString(), "500m");
  EXPECT_EQ(value->describedObject.kind, "Pod");
  EXPECT_EQ(value->describedObject.apiVersion, "/v1");
  EXPECT_EQ(value->describedObject.namespaceName, "default");
  EXPECT_EQ(value->metricName, "http_requests");
  EXPECT_FALSE(value->selector.has_value());
}

TEST_F(CustomProviderTest, ResourceSpellingsAreNormalised) {
  prometheus_->setVector(kOnePod, {sample({{"pod", "web-1"}}, 2)});
  auto value =
      provider_->getMetricByName("default", "web-1", {{"", "Pod"}, true, "http_requests"}, {});
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value->value.toString(), "2");
}

TEST_F(CustomProviderTest, NamedObjectErrors) {
  struct Case {
    std::string what;
    prom::Result<prom::QueryResultPtr> answer;
    std::string metric;
    int code;
    std::string message;
  };
  const prom::QueryResultPtr matrix = testing::emptyAnswer(prom::ResultType::kMatrix);
  const std::vector<Case> cases = {
      {"no sample: 404, never 0", vectorAnswer({}), "http_requests", 404,
       "the server could not find the metric http_requests for pods web-1"},
      {"a sample of another pod only", vectorAnswer({sample({{"pod", "web-2"}}, 1)}),
       "http_requests", 404, "the server could not find the metric http_requests for pods web-1"},
      {"NaN is no value", vectorAnswer({sample({{"pod", "web-1"}}, std::nan(""))}), "http_requests",
       404, "the server could not find the metric http_requests for pods web-1"},
      {"unknown metric", vectorAnswer({}), "nope", 404,
       "the server could not find the metric nope for pods"},
      {"Prometheus unreachable: 503 naming the cause",
       prom::failure(prom::FailureKind::kConnection, "connection refused"), "http_requests", 503,
       "unable to fetch metrics: prometheus connection failed: connection refused"},
      {"Prometheus error: 500", prom::failure(prom::FailureKind::kBadJson, "not JSON"),
       "http_requests", 500, "unable to fetch metrics: prometheus bad JSON: not JSON"},
      {"a matrix is not a vector", matrix, "http_requests", 500, "matrix"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    prometheus_->setQuery(kOnePod, c.answer);
    testing::expectFailure(named("web-1", c.metric), c.code, c.message);
  }
}

TEST_F(CustomProviderTest, NotANumberIsMissingNeverAHugeValue) {
  // A saturated +Inf would make the HPA scale to its maximum: NaN and ±Inf are missing objects,
  // counted by reason; a finite value beyond the int64 milli range still saturates.
  const std::vector<std::pair<double, bool>> rows = {
      {std::numeric_limits<double>::infinity(), false},
      {-std::numeric_limits<double>::infinity(), false},
      {std::nan(""), false},
      {1e300, true},
  };
  for (auto [input, served] : rows) {
    SCOPED_TRACE(input);
    prometheus_->setVector(kOnePod, {sample({{"pod", "web-1"}}, input)});
    auto value = named("web-1");
    EXPECT_EQ(value.ok(), served);
    if (served) {
      EXPECT_TRUE(value->value.saturated());
    } else {
      EXPECT_EQ(value.status().httpCode(), 404);
    }
  }
  prometheus_->setVector(kAllPods, {sample({{"pod", "a"}}, 1), sample({{"pod", "b"}}, INFINITY),
                                    sample({{"pod", "c"}}, -INFINITY)});
  auto items = wildcard();
  ASSERT_TRUE(items.ok()) << items.status().message();
  EXPECT_EQ(names(*items), (std::vector<std::string>{"a"}));
  const std::string text = exposition();
  EXPECT_NE(text.find("gpuscale_adapter_infinite_values_total{api=\"custom\"} 4"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpuscale_adapter_nan_values_total{api=\"custom\"} 1"), std::string::npos)
      << text;
}

TEST_F(CustomProviderTest, WildcardOfEverythingQueriesNamespaceWide) {
  prometheus_->setVector(kAllPods, {sample({{"pod", "b"}}, 2), sample({{"pod", "a"}}, 1),
                                    sample({{"pod", "c"}}, std::nan(""))});
  auto items = wildcard();
  ASSERT_TRUE(items.ok()) << items.status().message();
  EXPECT_EQ(names(*items), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(prometheus_->calls(std::string("query:") + kAllPods), 1u);
}

TEST_F(CustomProviderTest, WildcardOfFewNamesUsesAnAlternation) {
  lister_->objects = ObjectSet{false, {"b", "a"}, {}};
  prometheus_->setVector(R"(sum(http_requests{namespace="default",pod=~"b|a"}) by (pod))",
                         {sample({{"pod", "a"}}, 1), sample({{"pod", "b"}}, 2)});
  auto items = wildcard();
  ASSERT_TRUE(items.ok()) << items.status().message();
  EXPECT_EQ(names(*items), (std::vector<std::string>{"b", "a"}));  // the lister's order
}

TEST_F(CustomProviderTest, WildcardOfManyNamesFiltersANamespaceWideQuery) {
  lister_->objects = ObjectSet{false, {"a", "b", "c", "d"}, {}};  // above maxNamesInQuery (3)
  prometheus_->setVector(
      kAllPods, {sample({{"pod", "a"}}, 1), sample({{"pod", "x"}}, 9), sample({{"pod", "d"}}, 4)});
  auto items = wildcard();
  ASSERT_TRUE(items.ok()) << items.status().message();
  EXPECT_EQ(names(*items), (std::vector<std::string>{"a", "d"}));
  EXPECT_EQ(prometheus_->calls(std::string("query:") + kAllPods), 1u);
}

TEST_F(CustomProviderTest, WildcardWithoutObjectsIsNotFound) {
  lister_->objects = ObjectSet{false, {}, {}};
  auto items = wildcard();
  ASSERT_FALSE(items.ok());
  EXPECT_EQ(items.status().httpCode(), 404);
}

TEST_F(CustomProviderTest, WildcardFailureIsAnErrorNotAnEmptyList) {
  prometheus_->setQuery(kAllPods, prom::failure(prom::FailureKind::kTimeout, "no answer in 2s"));
  auto items = wildcard();
  ASSERT_FALSE(items.ok());
  EXPECT_EQ(items.status().httpCode(), 503);
}

TEST_F(CustomProviderTest, UnknownMetricCostsNoObjectListing) {
  auto items = provider_->getMetricBySelector("default", {}, {{"", "pods"}, true, "nope"}, {});
  ASSERT_FALSE(items.ok());
  EXPECT_EQ(items.status().httpCode(), 404);
  EXPECT_EQ(lister_->calls, 0);
}

TEST_F(CustomProviderTest, MetricSelectorBecomesMatchersAndIsEchoed) {
  auto selector = core::LabelSelector::parse("verb=GET");
  ASSERT_TRUE(selector.ok());
  prometheus_->setVector(
      R"(sum(http_requests{verb="GET",namespace="default",pod="web-1"}) by (pod))",
      {sample({{"pod", "web-1"}}, 3)});
  auto value = provider_->getMetricByName("default", "web-1", {{"", "pods"}, true, "http_requests"},
                                          *selector);
  ASSERT_TRUE(value.ok()) << value.status().message();
  ASSERT_TRUE(value->selector.has_value());
  EXPECT_EQ(value->selector->toString(), "verb=GET");
}

TEST_F(CustomProviderTest, NamespaceObjectRoute) {
  prometheus_->setVector(R"(sum(http_requests{namespace="default"}) by (namespace))",
                         {sample({{"namespace", "default"}}, 7)});
  auto value =
      provider_->getMetricByName("", "default", {{"", "namespaces"}, false, "http_requests"}, {});
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value->describedObject.kind, "Namespace");
  EXPECT_EQ(value->describedObject.namespaceName, "");
  EXPECT_EQ(value->value.toString(), "7");
}

}  // namespace custom_provider_test
}  // namespace gpuscale::adapter
