#include "gpuscale/kube/discovery.h"

#include <gtest/gtest.h>

#include "fakes/fake_kube_client.h"

namespace gpuscale::kube {
namespace discovery_test {

using testing::FakeKubeClient;

std::shared_ptr<FakeKubeClient> cluster() {
  auto kube = std::make_shared<FakeKubeClient>();
  kube->setPath("/api/v1", Object::parse(R"({"kind":"APIResourceList","groupVersion":"v1",
    "resources":[
      {"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod"},
      {"name":"pods/status","singularName":"","namespaced":true,"kind":"Pod"},
      {"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace"},
      {"name":"services","singularName":"","namespaced":true,"kind":"Service"}]})"));
  kube->setPath("/apis", Object::parse(R"({"kind":"APIGroupList","groups":[
      {"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],
       "preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},
      {"name":"custom.metrics.k8s.io","versions":[{"version":"v1beta2"}],
       "preferredVersion":{"version":"v1beta2"}},
      {"name":"example.com","versions":[{"version":"v1alpha1"}],
       "preferredVersion":{"version":"v1alpha1"}}]})"));
  kube->setPath("/apis/apps/v1", Object::parse(R"({"resources":[
      {"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment"},
      {"name":"deployments/scale","singularName":"","namespaced":true,"kind":"Scale"}]})"));
  kube->setPath("/apis/example.com/v1alpha1", Object::parse(R"({"resources":[
      {"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod"},
      {"name":"inferencepools","singularName":"inferencepool","namespaced":false,"kind":"InferencePool"}]})"));
  // custom.metrics.k8s.io/v1beta2 is an unavailable APIService: its document is missing (404).
  return kube;
}

struct Case {
  const char* what;
  k8s::GroupResource query;
  std::string group;
  std::string resource;
  bool namespaced;
};

class ResolveTest : public ::testing::TestWithParam<Case> {};

TEST_P(ResolveTest, Resolves) {
  const auto& c = GetParam();
  DiscoveryResourceMapper mapper(cluster());
  ASSERT_TRUE(mapper.refresh().ok());
  auto info = mapper.resourceFor(c.query);
  ASSERT_TRUE(info.ok()) << c.what << ": " << info.status().toString();
  EXPECT_EQ(info->groupResource.group, c.group) << c.what;
  EXPECT_EQ(info->groupResource.resource, c.resource) << c.what;
  EXPECT_EQ(info->namespaced, c.namespaced) << c.what;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ResolveTest,
    ::testing::Values(
        Case{"plural", {"", "pods"}, "", "pods", true},
        Case{"singular", {"", "pod"}, "", "pods", true},
        Case{"kind, any case", {"", "Pod"}, "", "pods", true},
        Case{"core wins over a CRD with the same name", {"", "POD"}, "", "pods", true},
        Case{"explicit group picks the CRD", {"example.com", "pods"}, "example.com", "pods", true},
        Case{"cluster-scoped", {"", "namespace"}, "", "namespaces", false},
        Case{"missing singular falls back to the kind", {"", "service"}, "", "services", true},
        Case{"group resource", {"apps", "Deployment"}, "apps", "deployments", true},
        Case{"CRD by kind", {"", "inferencepool"}, "example.com", "inferencepools", false}));

TEST(DiscoveryTest, SubresourcesAndUnknownsAreNotResources) {
  DiscoveryResourceMapper mapper(cluster());
  ASSERT_TRUE(mapper.refresh().ok());
  EXPECT_EQ(mapper.resourceFor({"", "pods/status"}).status().httpCode(), 404);
  EXPECT_EQ(mapper.resourceFor({"", "widgets"}).status().message(),
            "the server doesn't have a resource type \"widgets\"");
  EXPECT_EQ(mapper.resources().size(), 6u);
}

TEST(DiscoveryTest, FieldsOfTheWrongTypeReadAsAbsent) {
  const auto list = Object::parse(R"({"resources":[
      {"name":"widgets","kind":7,"singularName":["w"],"namespaced":"true"},
      {"name":5}, "pods", {"name":"gadgets","kind":"Gadget","namespaced":true}]})");
  const auto infos = parseResourceList(list, "example.com", "v1");
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].groupResource.resource, "widgets");
  EXPECT_EQ(infos[0].kind, "");
  EXPECT_FALSE(infos[0].namespaced);
  EXPECT_EQ(infos[1].singular, "gadget");
  EXPECT_TRUE(infos[1].namespaced);
}

TEST(DiscoveryTest, MalformedGroupsAreSkipped) {
  auto kube = cluster();
  kube->setPath("/apis", Object::parse(R"({"groups":[5, {"name":"apps","preferredVersion":"v1"},
      {"name":["x"]}, {"name":"apps","preferredVersion":{"version":"v1"}}]})"));
  DiscoveryResourceMapper mapper(kube);
  ASSERT_TRUE(mapper.refresh().ok());
  EXPECT_TRUE(mapper.resourceFor({"apps", "deployments"}).ok());
}

TEST(DiscoveryTest, NothingBeforeTheFirstRefreshAndFailuresKeepTheTable) {
  auto kube = cluster();
  DiscoveryResourceMapper mapper(kube);
  EXPECT_FALSE(mapper.resourceFor({"", "pods"}).ok());
  ASSERT_TRUE(mapper.refresh().ok());
  kube->failNext("getPath", core::Status::unavailable("down"));
  EXPECT_FALSE(mapper.refresh().ok());
  EXPECT_TRUE(mapper.resourceFor({"", "pods"}).ok());
}

TEST(DiscoveryTest, RefreshPicksUpNewCrdsAndKeepsOldReferencesValid) {
  auto kube = cluster();
  DiscoveryResourceMapper mapper(kube);
  ASSERT_TRUE(mapper.refresh().ok());
  const auto& before = mapper.resources();
  const size_t sizeBefore = before.size();
  kube->setPath("/apis/example.com/v1alpha1", Object::parse(R"({"resources":[
      {"name":"widgets","singularName":"widget","namespaced":true,"kind":"Widget"}]})"));
  ASSERT_TRUE(mapper.refresh().ok());
  EXPECT_TRUE(mapper.resourceFor({"", "widget"}).ok());
  EXPECT_FALSE(mapper.resourceFor({"", "inferencepool"}).ok());
  EXPECT_EQ(before.size(), sizeBefore);  // still readable
}

TEST(DiscoveryTest, GroupThatFailsKeepsItsPreviousEntries) {
  auto kube = cluster();
  DiscoveryResourceMapper mapper(kube);
  ASSERT_TRUE(mapper.refresh().ok());
  kube->removePath("/apis/apps/v1");  // the group's discovery now fails (404)
  ASSERT_TRUE(mapper.refresh().ok());
  EXPECT_TRUE(mapper.resourceFor({"apps", "deployments"}).ok());
}

}  // namespace discovery_test
}  // namespace gpuscale::kube
