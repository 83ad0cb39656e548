#include "gpuscale/adapter/kube_object_lister.h"

#include <gtest/gtest.h>

#include "listed_objects_fixture.h"

namespace gpuscale::adapter {
namespace kube_object_lister_test {

class KubeObjectListerTest : public ::testing::Test {
 protected:
  void SetUp() override { createListedObjects(*kube_); }

  std::shared_ptr<testing::FakeKubeClient> kube_ = std::make_shared<testing::FakeKubeClient>();
};

struct ListCase {
  const char* what;
  const char* resource;
  const char* namespaceName;
  const char* selector;
  std::vector<std::string> names;
};

TEST_F(KubeObjectListerTest, ListsExactlyTheLiveObjectsTheSelectorMatches) {
  const ListCase cases[] = {
      {"a selector picks the matching pods of one namespace, sorted, not terminating ones",
       "pods",
       "default",
       "app=web",
       {"web-a", "web-b"}},
      {"no selector lists every live pod of the namespace",
       "pods",
       "default",
       "",
       {"db-0", "web-a", "web-b"}},
      {"a set-based selector is passed through", "pods", "default", "app in (db)", {"db-0"}},
      {"other namespaces are not listed", "pods", "other", "app=web", {"web-x"}},
      {"no match is an empty list, not everything", "pods", "default", "app=none", {}},
      {"root-scoped resources ignore the namespace",
       "namespaces",
       "default",
       "app=team",
       {"other"}},
  };
  KubeObjectLister lister(kube_);
  for (const ListCase& c : cases) {
    SCOPED_TRACE(c.what);
    auto selector = core::LabelSelector::parse(c.selector);
    ASSERT_TRUE(selector.ok());
    auto listed = lister.list(builtinResource(c.resource), c.namespaceName, *selector);
    ASSERT_TRUE(listed.ok()) << listed.status().message();
    EXPECT_FALSE(listed->all);
    EXPECT_EQ(listed->names, c.names);
  }
}

TEST_F(KubeObjectListerTest, KeepsNamespacesLabelsAndPhases) {
  kube::Object running = listedObject("other", "web-a", "web");
  running["status"]["phase"] = "Running";
  ASSERT_TRUE(
      kube_->create(kube::ResourceRef::collection("", "v1", "pods", "other"), running).ok());
  KubeObjectLister lister(kube_);
  auto selector = core::LabelSelector::parse("app=web");
  ASSERT_TRUE(selector.ok());
  auto listed = lister.list(builtinResource("pods"), "", *selector);  // every namespace
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  std::vector<std::string> described;
  for (const ListedObject& item : listed->objects) {
    described.push_back(item.namespaceName + "/" + item.name + " " + item.labels.at("app") + " " +
                        item.phase);
  }
  EXPECT_EQ(described, (std::vector<std::string>{"default/web-a web ", "default/web-b web ",
                                                 "other/web-a web Running", "other/web-x web "}));
  EXPECT_EQ(listed->names, (std::vector<std::string>{"web-a", "web-b", "web-a", "web-x"}));
}

TEST_F(KubeObjectListerTest, AFailedListIsAnErrorValueNotAnEmptySet) {
  kube_->failNext("list", core::Status::unavailable("etcd is gone"));
  KubeObjectLister lister(kube_);
  auto listed = lister.list(builtinResource("pods"), "default", core::LabelSelector());
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().httpCode(), 503);
  EXPECT_NE(listed.status().message().find("etcd is gone"), std::string::npos);
}

}  // namespace kube_object_lister_test
}  // namespace gpuscale::adapter
