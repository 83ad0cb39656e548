#include "gpuscale/sim/gpu_allocation.h"

#include <gtest/gtest.h>

#include "gpuscale/k8s/well_known_keys.h"

namespace gpuscale::sim {
namespace gpu_allocation_test {

kube::Object pod(const char* uid, const char* node, const char* phase, kube::Object limits,
                 const char* pin = nullptr) {
  kube::Object p = {{"metadata", {{"uid", uid}, {"name", uid}, {"namespace", "default"}}},
                    {"spec",
                     {{"nodeName", node},
                      {"containers", {{{"name", "c"}, {"resources", {{"limits", limits}}}}}}}},
                    {"status", {{"phase", phase}}}};
  if (pin != nullptr)
    p["metadata"]["annotations"] = {{std::string(k8s::kPinnedGpuAnnotation), pin}};
  return p;
}

TEST(GpuAllocationTest, PodClaims) {
  const kube::Object mig = {{"nvidia.com/mig-1g.5gb", "1"}, {"cpu", "1"}};
  auto claim = podGpuClaim(pod("a", "n1", "Running", mig), "n1");
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->uid, "a");
  EXPECT_EQ(claim->requests, (ResourceCounts{{"nvidia.com/mig-1g.5gb", 1}}));
  EXPECT_FALSE(podGpuClaim(pod("a", "n2", "Running", mig), "n1")) << "other node";
  EXPECT_FALSE(podGpuClaim(pod("a", "n1", "Succeeded", mig), "n1")) << "finished";
  EXPECT_FALSE(podGpuClaim(pod("a", "n1", "Running", {{"cpu", "1"}}), "n1")) << "no GPU request";
  EXPECT_TRUE(podGpuClaim(pod("a", "n1", "Pending", mig), "n1")) << "bound, not yet running";
  EXPECT_EQ(podGpuClaim(pod("a", "n1", "Running", mig, "1"), "n1")->pinnedGpu, 1);
}

TEST(GpuAllocationTest, FirstFitStickyAndReleased) {
  const std::vector<ResourceCounts> units = {{{"nvidia.com/mig-1g.5gb", 2}},
                                             {{"nvidia.com/mig-1g.5gb", 2}}};
  const ResourceCounts one = {{"nvidia.com/mig-1g.5gb", 1}};
  GpuAllocation a;
  a.update({{"p1", one, {}, ""}, {"p2", one, {}, ""}}, units);
  EXPECT_EQ(a.busyGpus(), (std::set<int>{0})) << "first fit packs GPU 0";
  a.update({{"p1", one, {}, ""}, {"p2", one, {}, ""}, {"p3", one, {}, ""}}, units);
  EXPECT_EQ(a.gpusOf("p3"), (std::set<int>{1})) << "GPU 0 is full";
  a.update({{"p3", one, {}, ""}}, units);
  EXPECT_EQ(a.busyGpus(), (std::set<int>{1})) << "p3 keeps GPU 1 after p1, p2 end";
  a.update({}, units);
  EXPECT_TRUE(a.busyGpus().empty());
}

TEST(GpuAllocationTest, PinnedAndUnplaceablePods) {
  const std::vector<ResourceCounts> units = {{{"nvidia.com/mig-1g.5gb", 7}},
                                             {{"nvidia.com/mig-3g.20gb", 2}}};
  GpuAllocation a;
  a.update({{"pinned", {{"nvidia.com/mig-1g.5gb", 1}}, 1, ""}}, units);
  EXPECT_EQ(a.busyGpus(), (std::set<int>{1})) << "the annotation wins";
  a.update({{"stray", {{"nvidia.com/mig-2g.10gb", 1}}, {}, ""}}, units);
  EXPECT_EQ(a.busyGpus(), (std::set<int>{0, 1})) << "a device no GPU offers holds the whole node";
}

}  // namespace gpu_allocation_test
}  // namespace gpuscale::sim
