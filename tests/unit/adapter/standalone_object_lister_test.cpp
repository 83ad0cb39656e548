#include "gpuscale/adapter/standalone_object_lister.h"

#include <gtest/gtest.h>

#include "fakes/prom_fake_client.h"
#include "rules_fixture.h"

namespace gpuscale::adapter {
namespace standalone_object_lister_test {

using testing::sample;

TEST(KubeStateMetricsLabelName, SanitisesLikeKubeStateMetrics) {
  struct Case {
    std::string key, label;
  };
  const std::vector<Case> cases = {
      {"app", "label_app"},
      {"app.kubernetes.io/name", "label_app_kubernetes_io_name"},
      {"tier-2", "label_tier_2"},
      {"Team_A", "label_Team_A"},
  };
  for (const Case& c : cases) EXPECT_EQ(kubeStateMetricsLabelName(c.key), c.label) << c.key;
}

class StandaloneObjectListerTest : public ::testing::Test {
 protected:
  core::Result<ObjectSet> list(const std::string& resource, const std::string& ns,
                               const std::string& selector) {
    auto info = k8s::BuiltinResourceTable::instance().resourceFor({"", resource});
    EXPECT_TRUE(info.ok());
    auto parsed = core::LabelSelector::parse(selector);
    EXPECT_TRUE(parsed.ok());
    return lister_.list(*info, ns, *parsed);
  }

  std::shared_ptr<fakes::FakePrometheusClient> prometheus_ =
      std::make_shared<fakes::FakePrometheusClient>();
  StandaloneObjectLister lister_{std::make_shared<QueryRunner>(prometheus_, nullptr, nullptr)};
};

TEST_F(StandaloneObjectListerTest, NoSelectorMeansEverythingPrometheusHas) {
  auto objects = list("pods", "default", "");
  ASSERT_TRUE(objects.ok());
  EXPECT_TRUE(objects->all);
  EXPECT_EQ(prometheus_->totalCalls(), 0u);
}

TEST_F(StandaloneObjectListerTest, PodSelectorsUseKubePodLabels) {
  prometheus_->setVector(
      R"(kube_pod_labels{namespace="default"})",
      {sample({{"pod", "b"}, {"label_app", "web"}, {"label_app_kubernetes_io_part_of", "shop"}}, 1),
       sample({{"pod", "a"}, {"label_app", "web"}}, 1),
       sample({{"pod", "c"}, {"label_app", "db"}}, 1)});
  struct Case {
    std::string selector;
    std::vector<std::string> pods;
  };
  const std::vector<Case> cases = {
      {"app=web", {"a", "b"}},
      {"app!=web", {"c"}},
      {"app in (db,web)", {"a", "b", "c"}},
      {"app.kubernetes.io/part-of=shop", {"b"}},
      {"!app.kubernetes.io/part-of", {"a", "c"}},
      {"app=none", {}},
  };
  for (const Case& c : cases) {
    auto objects = list("pods", "default", c.selector);
    ASSERT_TRUE(objects.ok()) << c.selector;
    EXPECT_FALSE(objects->all);
    EXPECT_EQ(objects->names, c.pods) << c.selector;
  }
}

TEST_F(StandaloneObjectListerTest, NamespaceSelectorsUseKubeNamespaceLabels) {
  prometheus_->setVector("kube_namespace_labels",
                         {sample({{"namespace", "ml"}, {"label_team", "inference"}}, 1),
                          sample({{"namespace", "web"}, {"label_team", "shop"}}, 1)});
  auto objects = list("namespaces", "", "team=inference");
  ASSERT_TRUE(objects.ok());
  EXPECT_EQ(objects->names, std::vector<std::string>{"ml"});
}

TEST_F(StandaloneObjectListerTest, OtherResourcesWithSelectorsAreABadRequest) {
  auto objects = list("services", "default", "app=web");
  ASSERT_FALSE(objects.ok());
  EXPECT_EQ(objects.status().httpCode(), 400);
  EXPECT_NE(objects.status().message().find("standalone"), std::string::npos);
}

}  // namespace standalone_object_lister_test
}  // namespace gpuscale::adapter
