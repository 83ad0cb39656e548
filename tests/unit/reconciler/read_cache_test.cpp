#include "gpuscale/reconciler/read_cache.h"

#include <gtest/gtest.h>

#include "cached_informer.h"
#include "gpuscale/partition/object_record.h"
#include "support/wait_until.h"

namespace gpuscale::reconciler {
namespace read_cache_test {

using gpuscale::testing::eventually;
using nlohmann::json;

const kube::ResourceRef kNodes = kube::ResourceRef::collection("", "v1", "nodes", "");
const kube::ResourceRef kHpas =
    kube::ResourceRef::collection("autoscaling", "v2", "horizontalpodautoscalers", "ml");

json node(const std::string& name, const std::string& migConfig) {
  return {{"metadata",
           {{"name", name},
            {"labels",
             {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
              {"nvidia.com/mig.config", migConfig}}}}},
          {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}}}};
}

json hpa(const std::string& name, int maxReplicas) {
  return {{"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec",
           {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", name}}},
            {"maxReplicas", maxReplicas}}}};
}

using ObjectCache = ReadCache<partition::ObjectRecord>;

struct Cached : testing::CachedInformer<ObjectCache> {
  Cached(const kube::ResourceRef& resource, std::string kind, StoreKeeps keeps)
      : CachedInformer(resource, keeps, [kind](const kube::Object& o) {
          return partition::readObjectRecord(kind, o);
        }) {}
};

// "name=mig.config" of every node record, "name!reason" for a skipped one, in order.
std::vector<std::string> nodes(const ObjectCache& cache) {
  std::vector<std::string> out;
  for (const auto& r : cache.records()) {
    if (const auto* n = std::get_if<partition::NodeObject>(&r->value)) {
      out.push_back(n->meta.name + "=" + n->meta.labels.at("nvidia.com/mig.config"));
    } else {
      out.push_back(r->skipped->name + "!" + r->skipped->reason);
    }
  }
  return out;
}

TEST(ReadCacheTest, NodesAreReadOncePerChangeAndTheStoreKeepsOnlyTheirIdentity) {
  Cached c(kNodes, "Node", StoreKeeps::kIdentity);
  ASSERT_TRUE(c.fake->create(kNodes, node("a", "all-1g.5gb")).ok());
  json malformed = node("bad", "x");
  malformed["metadata"]["labels"]["nvidia.com/mig.config"] = 7;
  ASSERT_TRUE(c.fake->create(kNodes, malformed).ok());
  c.informer->start();
  ASSERT_TRUE(c.informer->waitForSync(std::chrono::seconds(5)));
  EXPECT_EQ(nodes(c.cache), (std::vector<std::string>{"a=all-1g.5gb", "bad!malformed"}));
  const auto stored = c.informer->store().get("", "a");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->size(), 1u) << stored->dump();
  EXPECT_EQ((*stored)["metadata"]["name"], "a");

  // A record held (by a pass) outlives its replacement.
  const auto before = c.cache.records();
  ASSERT_TRUE(eventually([&] { return c.fake->openWatches() == 1; }));
  ASSERT_TRUE(c.fake
                  ->patch(kNodes.named("a"), kube::PatchType::kMerge,
                          {{"metadata", {{"labels", {{"nvidia.com/mig.config", "all-disabled"}}}}}})
                  .ok());
  ASSERT_TRUE(c.fake->remove(kNodes.named("bad")).ok());
  ASSERT_TRUE(
      eventually([&] { return nodes(c.cache) == std::vector<std::string>{"a=all-disabled"}; }));
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(
      std::get<partition::NodeObject>(before[0]->value).meta.labels.at("nvidia.com/mig.config"),
      "all-1g.5gb");
}

TEST(ReadCacheTest, HpasAreReadAndTheStoreKeepsTheObjectForItsOtherReaders) {
  Cached c(kHpas, "HorizontalPodAutoscaler", StoreKeeps::kObject);
  ASSERT_TRUE(c.fake->create(kHpas, hpa("web", 4)).ok());
  c.informer->start();
  ASSERT_TRUE(c.informer->waitForSync(std::chrono::seconds(5)));
  ASSERT_EQ(c.cache.size(), 1u);
  EXPECT_EQ(std::get<partition::HpaState>(c.cache.records()[0]->value).maxReplicas, 4);
  const auto stored = c.informer->store().get("ml", "web");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["spec"]["scaleTargetRef"]["name"], "web");
}

}  // namespace read_cache_test
}  // namespace gpuscale::reconciler
