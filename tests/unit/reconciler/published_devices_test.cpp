// publishedDevices (published_devices.h) on a fake cluster, one row per state of a node's
// ResourceSlices: what a MIG step on a DRA node waits for and what a raise counts.
#include "gpuscale/reconciler/published_devices.h"

#include <functional>

#include <gtest/gtest.h>

#include "fakes/fake_kube_client.h"
#include "unit/partition/dra_objects.h"

namespace gpuscale::reconciler {
namespace published_devices_test {

using nlohmann::json;
using partition::testing::draMigDevice;
using partition::testing::draSlice;

kube::ResourceRef slices() {
  return kube::ResourceRef::collection("resource.k8s.io", "v1", "resourceslices");
}

std::vector<json> staticDevices(const std::string& profile, int n) {
  std::vector<json> out;
  for (int i = 0; i < n; ++i) out.push_back(draMigDevice(0, profile, i));
  return out;
}

TEST(PublishedDevicesTest, CountsTheNodesCompletePoolAsTheSchedulerSeesIt) {
  struct Row {
    const char* what;
    std::function<void(gpuscale::testing::FakeKubeClient&)> cluster;
    bool pool;  // false: nullopt (not a DRA node, or no DRA API)
    partition::ResourceCounts devices;
    bool partitionable = false;
  };
  const std::vector<Row> rows{
      {"no slices: a device-plugin node", [](auto&) {}, false, {}},
      {"only another node's slices",
       [](auto& f) { ASSERT_TRUE(f.create(slices(), draSlice("n2", staticDevices("1g.5gb", 7)))); },
       false,
       {}},
      {"static MIG devices, one tainted NoSchedule",
       [](auto& f) {
         json s = draSlice("n1", staticDevices("1g.5gb", 4));
         s["spec"]["devices"][3]["taints"] = {{{"key", "k"}, {"effect", "NoSchedule"}}};
         ASSERT_TRUE(f.create(slices(), s));
       },
       true,
       {{"nvidia.com/mig-1g.5gb", 3}}},
      {"republished after a reshape: the highest generation only",
       [](auto& f) {
         ASSERT_TRUE(
             f.create(slices(), draSlice("n1", staticDevices("3g.20gb", 2), 1, 1, {}, "n1-old")));
         ASSERT_TRUE(
             f.create(slices(), draSlice("n1", staticDevices("1g.5gb", 7), 2, 1, {}, "n1-new")));
       },
       true,
       {{"nvidia.com/mig-1g.5gb", 7}}},
      {"being republished: one of two slices of the new generation, nothing yet",
       [](auto& f) {
         ASSERT_TRUE(
             f.create(slices(), draSlice("n1", staticDevices("3g.20gb", 2), 1, 1, {}, "n1-old")));
         ASSERT_TRUE(
             f.create(slices(), draSlice("n1", staticDevices("1g.5gb", 7), 2, 2, {}, "n1-new-a")));
       },
       true,
       {}},
      {"partitionable: what the counters allow",
       [](auto& f) {
         ASSERT_TRUE(f.create(slices(), partition::testing::draPartitionableSlice("n1")));
       },
       true,
       {{"nvidia.com/gpu", 1}, {"nvidia.com/mig-1g.5gb", 7}, {"nvidia.com/mig-3g.20gb", 2}},
       true},
      {"resource.k8s.io not served",
       [](auto& f) { f.failNext("list", core::Status::notFound("the server could not")); },
       false,
       {}},
      {"not allowed to list them",
       [](auto& f) { f.failNext("list", core::Status(403, "Forbidden", "resourceslices")); },
       false,
       {}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    gpuscale::testing::FakeKubeClient fake;
    row.cluster(fake);
    auto got = publishedDevices(fake, "n1");
    ASSERT_TRUE(got.ok()) << got.status().toString();
    ASSERT_EQ(got->has_value(), row.pool);
    if (!row.pool) continue;
    EXPECT_EQ((*got)->devices, row.devices);
    EXPECT_EQ((*got)->partitionable, row.partitionable);
  }
}

TEST(PublishedDevicesTest, AnotherFailureIsAnError) {
  gpuscale::testing::FakeKubeClient fake;
  fake.failNext("list", core::Status::unavailable("connection refused"));
  EXPECT_FALSE(publishedDevices(fake, "n1").ok());
}

}  // namespace published_devices_test
}  // namespace gpuscale::reconciler
