#include "gpuscale/reconciler/pod_cache.h"

#include <gtest/gtest.h>

#include <thread>

#include "cached_informer.h"
#include "support/wait_until.h"

namespace gpuscale::reconciler {
namespace pod_cache_test {

using gpuscale::testing::eventually;

using nlohmann::json;

const kube::ResourceRef kPods = kube::ResourceRef::collection("", "v1", "pods", "ml");

json gpuPod(const std::string& name) {
  return {
      {"metadata", {{"name", name}, {"namespace", "ml"}, {"labels", {{"app", "web"}}}}},
      {"spec",
       {{"nodeName", "n1"},
        {"containers", json::array({{{"name", "c"},
                                     {"image", "big"},
                                     {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}},
      {"status", {{"phase", "Running"}}}};
}

// "name" of every record, "name!reason" for a skipped one, in order.
std::vector<std::string> names(const PodCache& cache) {
  std::vector<std::string> out;
  for (const auto& r : cache.records()) {
    out.push_back(r->pod ? r->pod->name : r->skipped->name + "!" + r->skipped->reason);
  }
  return out;
}

struct CachedPods : testing::CachedInformer<PodCache> {
  explicit CachedPods(bool keepObjects)
      : CachedInformer(kPods, keepObjects ? StoreKeeps::kObject : StoreKeeps::kIdentity) {}
};

TEST(PodCacheTest, RecordsFollowTheListTheWatchAndARelistAndTheStoreKeepsOnlyIdentity) {
  CachedPods pods(false);
  ASSERT_TRUE(pods.fake->create(kPods, gpuPod("a")).ok());
  json malformed = gpuPod("bad");
  malformed["spec"]["priority"] = "high";
  ASSERT_TRUE(pods.fake->create(kPods, malformed).ok());
  pods.informer->start();
  ASSERT_TRUE(pods.informer->waitForSync(std::chrono::seconds(5)));
  EXPECT_EQ(names(pods.cache), (std::vector<std::string>{"a", "bad!malformed"}));
  const auto stored = pods.informer->store().get("ml", "a");
  ASSERT_TRUE(stored);
  ASSERT_EQ(stored->size(), 1u) << stored->dump();
  for (const auto& [key, _] : (*stored)["metadata"].items()) {
    EXPECT_TRUE(key == "name" || key == "namespace" || key == "uid" || key == "resourceVersion")
        << key;
  }
  EXPECT_EQ((*stored)["metadata"]["name"], "a");

  // Watched: an add, an update, a delete.
  ASSERT_TRUE(eventually([&] { return pods.fake->openWatches() == 1; }));
  ASSERT_TRUE(pods.fake->create(kPods, gpuPod("b")).ok());
  ASSERT_TRUE(
      pods.fake
          ->patch(kPods.named("a"), kube::PatchType::kMerge, {{"status", {{"phase", "Succeeded"}}}})
          .ok());
  ASSERT_TRUE(pods.fake->remove(kPods.named("bad")).ok());
  ASSERT_TRUE(eventually([&] { return names(pods.cache) == std::vector<std::string>{"a", "b"}; }));
  ASSERT_TRUE(eventually([&] { return pods.cache.records().front()->pod->phase == "Succeeded"; }));

  // Changes the watch cannot see, then a 410: the relist adds and forgets what changed.
  pods.fake->setRecordEvents(false);
  ASSERT_TRUE(pods.fake->remove(kPods.named("a")).ok());
  ASSERT_TRUE(pods.fake->create(kPods, gpuPod("c")).ok());
  pods.fake->setRecordEvents(true);
  pods.fake->endWatches(core::Status(410, "Expired", "too old resource version"));
  ASSERT_TRUE(eventually([&] { return names(pods.cache) == std::vector<std::string>{"b", "c"}; }));
  EXPECT_EQ(pods.cache.size(), pods.informer->store().size());
}

TEST(PodCacheTest, KeepingObjectsStoresThemWholeBesideTheRecords) {
  CachedPods pods(true);
  ASSERT_TRUE(pods.fake->create(kPods, gpuPod("a")).ok());
  pods.informer->start();
  ASSERT_TRUE(pods.informer->waitForSync(std::chrono::seconds(5)));
  EXPECT_EQ(names(pods.cache), std::vector<std::string>{"a"});
  const auto stored = pods.informer->store().get("ml", "a");
  ASSERT_TRUE(stored);
  EXPECT_TRUE(stored->contains("spec"));
}

}  // namespace pod_cache_test
}  // namespace gpuscale::reconciler
