#include "gpuscale/adapter/cached_object_lister.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <condition_variable>

#include "gpuscale/kube/forwarding_client.h"
#include "listed_objects_fixture.h"
#include "support/wait_until.h"

namespace gpuscale::adapter {
namespace cached_object_lister_test {

using testing::FakeKubeClient;

constexpr auto kWait = std::chrono::seconds(5);

// Holds the informers' LISTs (a consistent read: resourceVersion "") until released, so a test
// can look at a cache that has not synced; everything else goes straight to the fake.
class HeldListClient final : public kube::ForwardingKubeClient {
 public:
  explicit HeldListClient(std::shared_ptr<FakeKubeClient> fake) : ForwardingKubeClient(fake) {}
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  core::Result<kube::ObjectList> list(const kube::ResourceRef& ref,
                                      const kube::ListOptions& options) override {
    if (options.resourceVersion.empty()) {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return released_; });
    }
    return inner().list(ref, options);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
};

std::vector<std::string> namesOf(const core::Result<ObjectSet>& listed) {
  EXPECT_TRUE(listed.ok()) << listed.status().message();
  return listed.ok() ? listed->names : std::vector<std::string>{};
}

TEST(CachedFieldsOfTest, KeepsOnlyWhatResolutionNeeds) {
  const auto full = kube::Object::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"},
      "resourceVersion": "42", "deletionTimestamp": "2026-01-01T00:00:00Z",
      "annotations": {"big": "x"}, "managedFields": [{"manager": "kubectl"}], "uid": "u"},
    "spec": {"containers": [{"name": "c"}]},
    "status": {"phase": "Running", "conditions": [{"type": "Ready"}]}})");
  struct Case {
    const char* what;
    kube::Object in;
    bool keepPhase;
    const char* want;
  };
  const Case cases[] = {
      {"a pod keeps its metadata essentials and phase", full, true,
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z",)"
       R"("labels":{"app":"web"},"name":"web-0","namespace":"default","resourceVersion":"42"},)"
       R"("status":{"phase":"Running"}})"},
      {"other resources keep no status", full, false,
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z",)"
       R"("labels":{"app":"web"},"name":"web-0","namespace":"default","resourceVersion":"42"}})"},
      {"PartialObjectMetadata keeps its kind", kube::partialObjectMetadata(full), false,
       R"({"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":{)"
       R"("deletionTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"web"},"name":"web-0",)"
       R"("namespace":"default","resourceVersion":"42"}})"},
      {"an object without metadata gets an empty one", kube::Object{{"kind", "X"}}, true,
       R"({"kind":"X","metadata":{}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(cachedFieldsOf(c.in, c.keepPhase).dump(), c.want);
  }
}

class CachedObjectListerTest : public ::testing::Test {
 protected:
  void SetUp() override { createListedObjects(*kube_); }

  std::string exposition() const {
    return prometheus::TextSerializer().Serialize(registry_->Collect());
  }

  std::shared_ptr<FakeKubeClient> kube_ = std::make_shared<FakeKubeClient>();
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
};

TEST_F(CachedObjectListerTest, AnswersAsADirectListDoesWithoutListingPerRequest) {
  struct Case {
    const char* what;
    const char* resource;
    const char* namespaceName;
    const char* selector;
  };
  const Case cases[] = {
      {"a selector in one namespace, terminating pods left out", "pods", "default", "app=web"},
      {"no selector", "pods", "default", ""},
      {"a set-based selector", "pods", "default", "app in (db)"},
      {"another namespace", "pods", "other", "app=web"},
      {"every namespace", "pods", "", "app=web"},
      {"no match", "pods", "default", "app=none"},
      {"a negative selector", "pods", "default", "app!=web"},
      {"root-scoped resources ignore the namespace", "namespaces", "default", "app=team"},
  };
  CachedObjectLister cached(kube_, registry_);
  cached.watch(builtinResource("pods"));
  cached.watch(builtinResource("namespaces"));
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        return cached.synced(builtinResource("pods")) &&
               cached.synced(builtinResource("namespaces"));
      },
      kWait));
  const int listsAfterSync = kube_->calls("list");
  KubeObjectLister direct(kube_);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto selector = core::LabelSelector::parse(c.selector);
    ASSERT_TRUE(selector.ok());
    const auto want = direct.list(builtinResource(c.resource), c.namespaceName, *selector);
    const int listsBefore = kube_->calls("list");
    const auto got = cached.list(builtinResource(c.resource), c.namespaceName, *selector);
    const auto names = cached.listNames(builtinResource(c.resource), c.namespaceName, *selector);
    EXPECT_EQ(kube_->calls("list"), listsBefore) << "served from the cache";
    EXPECT_EQ(namesOf(got), namesOf(want));
    EXPECT_EQ(namesOf(names), namesOf(want));
    EXPECT_TRUE(names->objects.empty());
    ASSERT_EQ(got->objects.size(), want->objects.size());
    for (size_t i = 0; i < got->objects.size(); ++i) {
      EXPECT_EQ(got->objects[i].namespaceName, want->objects[i].namespaceName);
      EXPECT_EQ(got->objects[i].labels, want->objects[i].labels);
    }
  }
  EXPECT_EQ(listsAfterSync + static_cast<int>(std::size(cases)), kube_->calls("list"))
      << "only the direct lister's LISTs";
  EXPECT_NE(exposition().find(
                R"(gpuscale_adapter_object_lookups_total{resource="pods",source="cache"} 14)"),
            std::string::npos)
      << exposition();
}

TEST_F(CachedObjectListerTest, PodsKeepTheirPhaseAndNewPodsAppear) {
  kube::Object running = listedObject("default", "web-c", "web");
  running["status"]["phase"] = "Running";
  CachedObjectLister cached(kube_, registry_);
  cached.watch(builtinResource("pods"));
  ASSERT_TRUE(testing::waitUntil([&] { return cached.synced(builtinResource("pods")); }, kWait));
  ASSERT_TRUE(kube_->create(podsIn("default"), running).ok());
  const auto selector = *core::LabelSelector::parse("app=web");
  ASSERT_TRUE(testing::waitUntil(
      [&] {
        auto listed = cached.list(builtinResource("pods"), "default", selector);
        return listed.ok() && listed->names.size() == 3;
      },
      kWait));
  auto listed = cached.list(builtinResource("pods"), "default", selector);
  EXPECT_EQ(listed->names, (std::vector<std::string>{"web-a", "web-b", "web-c"}));
  EXPECT_EQ(listed->objects.back().phase, "Running");
  ASSERT_TRUE(kube_->remove(podsIn("default").named("web-a")).ok());
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        return cached.list(builtinResource("pods"), "default", selector)->names ==
               std::vector<std::string>{"web-b", "web-c"};
      },
      kWait));
}

TEST_F(CachedObjectListerTest, ListsFromTheApiWhileTheCacheSyncs) {
  auto held = std::make_shared<HeldListClient>(kube_);
  CachedObjectLister cached(held, registry_);
  const auto selector = *core::LabelSelector::parse("app=web");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(namesOf(cached.list(builtinResource("pods"), "default", selector)),
              (std::vector<std::string>{"web-a", "web-b"}));
  }
  EXPECT_FALSE(cached.synced(builtinResource("pods")));
  EXPECT_NE(exposition().find(
                R"(gpuscale_adapter_object_lookups_total{resource="pods",source="apiserver"} 2)"),
            std::string::npos)
      << exposition();
  held->release();
  ASSERT_TRUE(testing::waitUntil([&] { return cached.synced(builtinResource("pods")); }, kWait));
  const int lists = kube_->calls("list");
  EXPECT_EQ(namesOf(cached.list(builtinResource("pods"), "default", selector)),
            (std::vector<std::string>{"web-a", "web-b"}));
  EXPECT_EQ(kube_->calls("list"), lists);
}

TEST_F(CachedObjectListerTest, OtherResourcesAreWatchedAsMetadataOnly) {
  CachedObjectLister cached(kube_, registry_);
  cached.watch(builtinResource("namespaces"));
  ASSERT_TRUE(
      testing::waitUntil([&] { return cached.synced(builtinResource("namespaces")); }, kWait));
  auto listed = cached.list(builtinResource("namespaces"), "", core::LabelSelector());
  EXPECT_EQ(namesOf(listed), (std::vector<std::string>{"default", "other"}));
}

}  // namespace cached_object_lister_test
}  // namespace gpuscale::adapter
