#include "gpuscale/adapter/resource_discovery.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <fstream>

#include "fakes/fake_kube_client.h"
#include "fakes/prom_fake_client.h"
#include "gpuscale/adapter/config_reloader.h"
#include "rules_fixture.h"
#include "support/temp_dir.h"

namespace gpuscale::adapter {
namespace resource_discovery_test {

using kube::Object;

constexpr char kPolicyGroup[] = R"({"name":"policy",
    "preferredVersion":{"groupVersion":"policy/v1","version":"v1"}})";
constexpr char kWidgetGroup[] = R"({"name":"example.com",
    "preferredVersion":{"groupVersion":"example.com/v1","version":"v1"}})";
constexpr char kMetricsGroup[] = R"({"name":"external.metrics.k8s.io",
    "preferredVersion":{"version":"v1beta1"}})";

// A cluster that serves pods, namespaces, PodDisruptionBudgets (not in the built-in table) and,
// once installCrd() ran, the CRD-backed widgets.example.com.
class FakeCluster {
 public:
  FakeCluster() {
    kube_->setPath("/api/v1", Object::parse(R"({"resources":[
        {"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod"},
        {"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace"}]})"));
    kube_->setPath("/apis/policy/v1", Object::parse(R"({"resources":[
        {"name":"poddisruptionbudgets","singularName":"poddisruptionbudget","namespaced":true,
         "kind":"PodDisruptionBudget"}]})"));
    // An external metric is not an object kind: the mapper must not read this list.
    kube_->setPath("/apis/external.metrics.k8s.io/v1beta1",
                   Object::parse(R"({"resources":[{"name":"queue_depth","namespaced":true}]})"));
    setGroups(false);
  }

  void installCrd() {
    kube_->setPath("/apis/example.com/v1", Object::parse(R"({"resources":[
        {"name":"widgets","singularName":"widget","namespaced":true,"kind":"Widget"}]})"));
    setGroups(true);
  }

  std::shared_ptr<gpuscale::testing::FakeKubeClient> client() const { return kube_; }

 private:
  void setGroups(bool withCrd) {
    std::string groups = std::string(R"({"groups":[)") + kPolicyGroup + "," + kMetricsGroup;
    if (withCrd) groups += std::string(",") + kWidgetGroup;
    kube_->setPath("/apis", Object::parse(groups + "]}"));
  }

  std::shared_ptr<gpuscale::testing::FakeKubeClient> kube_ =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
};

std::string exposition(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

TEST(ResourceDiscoveryTest, StartsFromTheBuiltinTableUntilDiscoveryAnswers) {
  FakeCluster cluster;
  auto registry = std::make_shared<prometheus::Registry>();
  ResourceDiscovery discovery(cluster.client(), registry);
  EXPECT_TRUE(discovery.mapper().resourceFor({"", "deployment"}).ok());
  EXPECT_FALSE(discovery.mapper().resourceFor({"", "poddisruptionbudget"}).ok());

  EXPECT_TRUE(discovery.refreshOnce());
  EXPECT_TRUE(discovery.mapper().resourceFor({"", "poddisruptionbudget"}).ok());
  EXPECT_FALSE(discovery.mapper().resourceFor({"", "queue_depth"}).ok());
  EXPECT_FALSE(discovery.refreshOnce()) << "nothing changed";
  EXPECT_NE(exposition(*registry).find("gpuscale_api_discovery_resources 3"), std::string::npos);
}

TEST(ResourceDiscoveryTest, FailuresKeepTheLastTableAndAreCounted) {
  FakeCluster cluster;
  auto registry = std::make_shared<prometheus::Registry>();
  ResourceDiscovery discovery(cluster.client(), registry);
  ASSERT_TRUE(discovery.refreshOnce());
  cluster.client()->failNext("getPath", core::Status::unavailable("down"), 2);
  EXPECT_FALSE(discovery.refreshOnce());
  EXPECT_FALSE(discovery.refreshOnce());
  EXPECT_TRUE(discovery.mapper().resourceFor({"policy", "poddisruptionbudgets"}).ok());
  std::string text = exposition(*registry);
  EXPECT_NE(text.find("gpuscale_api_discovery_refreshes_total{result=\"failure\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpuscale_api_discovery_degraded 1"), std::string::npos);

  EXPECT_FALSE(discovery.refreshOnce()) << "recovered, unchanged";
  text = exposition(*registry);
  EXPECT_NE(text.find("gpuscale_api_discovery_degraded 0"), std::string::npos);
  EXPECT_NE(text.find("gpuscale_api_discovery_changes_total 1"), std::string::npos);
}

// A rule whose override names a CRD that is not installed yet loads (with a warning) and serves
// once the CRD is there; a <<.Resource>> rule maps labels of any served resource.
constexpr char kRules[] = R"(rules:
- seriesQuery: 'w_total{namespace!="",widget!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      widget: {group: example.com, resource: widgets}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
- seriesQuery: 'p_total{namespace!="",poddisruptionbudget!=""}'
  resources: {template: "<<.Resource>>"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
)";

class RulesFollowDiscoveryTest : public ::testing::Test {
 protected:
  RulesFollowDiscoveryTest() {
    std::ofstream(dir_.file("rules.yaml")) << kRules;
    prom_->setDiscoverable("w_total{namespace!=\"\",widget!=\"\"}", "w_total",
                           {"namespace", "widget"});
    prom_->setDiscoverable("p_total{namespace!=\"\",poddisruptionbudget!=\"\"}", "p_total",
                           {"namespace", "poddisruptionbudget"});
  }

  core::Result<std::shared_ptr<ConfigReloader>> create(const k8s::ResourceMapper& mapper,
                                                       bool unknownOverridesWarn = true) {
    ReloadSettings settings;
    settings.configFile = dir_.file("rules.yaml");
    settings.registry = registry_;
    settings.relist.interval = std::chrono::hours(1);
    settings.mapper = &mapper;
    settings.compile.unknownOverridesWarn = unknownOverridesWarn;
    settings.makeBackend =
        [this](const std::string& name,
               const prom::PrometheusOptions&) -> core::Result<std::shared_ptr<const Backend>> {
      return std::make_shared<const Backend>(name, prom_, prom_, nullptr);
    };
    return ConfigReloader::create(std::move(settings));
  }

  static std::vector<std::string> metrics(const ConfigReloader& reloader) {
    auto out = testing::customMetricNames(*reloader.snapshot());
    std::sort(out.begin(), out.end());
    return out;
  }

  gpuscale::testing::TempDir dir_;
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::shared_ptr<fakes::FakePrometheusClient> prom_ =
      std::make_shared<fakes::FakePrometheusClient>();
};

TEST_F(RulesFollowDiscoveryTest, AnOverrideNamingACrdServesOnceTheCrdExists) {
  FakeCluster cluster;
  ResourceDiscovery discovery(cluster.client(), registry_);
  ASSERT_TRUE(discovery.refreshOnce());
  auto reloader = create(discovery.mapper());
  ASSERT_TRUE(reloader.ok()) << reloader.status().toString();
  const auto& warnings = (*reloader)->rules()->warnings;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].path, "rules[0].resources.overrides.widget");
  EXPECT_NE(warnings[0].message.find("does not serve"), std::string::npos);
  ASSERT_TRUE((*reloader)->reload().ok());
  EXPECT_EQ(metrics(**reloader),
            (std::vector<std::string>{"namespaces/p_total", "namespaces/w_total",
                                      "poddisruptionbudgets.policy/p_total"}));

  cluster.installCrd();
  ASSERT_TRUE(discovery.refreshOnce());
  ASSERT_TRUE((*reloader)->reload().ok());
  EXPECT_TRUE((*reloader)->rules()->warnings.empty());
  EXPECT_EQ(metrics(**reloader),
            (std::vector<std::string>{"namespaces/p_total", "namespaces/w_total",
                                      "poddisruptionbudgets.policy/p_total",
                                      "widgets.example.com/w_total"}));
}

TEST_F(RulesFollowDiscoveryTest, WithoutTheOptionAnUnknownOverrideIsAnError) {
  auto reloader = create(k8s::BuiltinResourceTable::instance(), false);
  ASSERT_FALSE(reloader.ok());
  EXPECT_NE(reloader.status().message().find("rules[0].resources.overrides.widget"),
            std::string::npos)
      << reloader.status().message();
}

}  // namespace resource_discovery_test
}  // namespace gpuscale::adapter
