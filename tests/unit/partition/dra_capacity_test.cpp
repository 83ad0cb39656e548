#include "gpuscale/partition/dra_capacity.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dra_objects.h"

namespace gpuscale::partition {
namespace dra_capacity_test {

using nlohmann::json;

ResourceSliceObject slice(const json& object) {
  auto s = readResourceSlice(object);
  EXPECT_TRUE(s.ok()) << s.status().toString();
  return s.ok() ? *s : ResourceSliceObject{};
}

ResourceClaimObject claimOf(const std::string& node, const std::string& device) {
  auto c = readResourceClaim(testing::draClaim("ml", "c-" + device, "p", node, device));
  EXPECT_TRUE(c.ok()) << c.status().toString();
  return c.ok() ? *c : ResourceClaimObject{};
}

// A static pool: one whole GPU and seven 1g.5gb devices of a second GPU.
json staticSlice(int generation = 1, int sliceCount = 1) {
  std::vector<json> devices{testing::draGpuDevice(0)};
  for (int start = 0; start < 7; ++start) {
    devices.push_back(testing::draMigDevice(1, "1g.5gb", start));
  }
  return testing::draSlice("n1", devices, generation, sliceCount);
}

json partitionableSlice() { return testing::draPartitionableSlice("n1"); }

struct PoolCase {
  const char* what;
  std::vector<json> slices;
  std::vector<std::string> allocated;  // devices of n1 some claim holds
  ResourceCounts capacity;
  ResourceCounts used;
  bool complete;
};

TEST(DraCapacityTest, CapacityPerKindOfAPool) {
  const std::string mig1 = "nvidia.com/mig-1g.5gb", mig3 = "nvidia.com/mig-3g.20gb",
                    gpu = "nvidia.com/gpu";
  json tainted = staticSlice();
  tainted["spec"]["devices"][0]["taints"] = {{{"key", "maintenance"}, {"effect", "NoExecute"}}};
  json newer = staticSlice(2);
  newer["spec"]["devices"].erase(7);  // generation 2 publishes one device less
  json otherDriver = staticSlice();
  otherDriver["spec"]["driver"] = "example.com";
  const std::vector<PoolCase> cases{
      {"static: what is published", {staticSlice()}, {}, {{gpu, 1}, {mig1, 7}}, {}, true},
      {"static: allocated devices are used, and still capacity",
       {staticSlice()},
       {"gpu-1-mig-1g5gb-0", "gpu-0"},
       {{gpu, 1}, {mig1, 7}},
       {{gpu, 1}, {mig1, 1}},
       true},
      {"static: a tainted device publishes no capacity",
       {tainted},
       {},
       {{gpu, 0}, {mig1, 7}},
       {},
       true},
      {"only the highest generation counts",
       {staticSlice(1), newer},
       {},
       {{gpu, 1}, {mig1, 6}},
       {},
       true},
      {"an incomplete pool publishes nothing",
       {staticSlice(1, 2)},
       {"gpu-0"},
       {{gpu, 1}, {mig1, 0}},
       {{gpu, 1}},
       false},
      {"partitionable: every placement the counters allow",
       {partitionableSlice()},
       {},
       {{gpu, 1}, {mig1, 7}, {mig3, 2}},
       {},
       true},
      {"partitionable: an allocated slice leaves the rest",
       {partitionableSlice()},
       {"gpu-0-mig-1g5gb-0"},
       {{gpu, 0}, {mig1, 7}, {mig3, 1}},
       {{mig1, 1}},
       true},
      {"partitionable: the whole GPU takes every counter",
       {partitionableSlice()},
       {"gpu-0"},
       {{gpu, 1}, {mig1, 0}, {mig3, 0}},
       {{gpu, 1}},
       true},
      {"another driver's devices are no GPUs", {otherDriver}, {}, {}, {}, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<ResourceSliceObject> slices;
    for (const auto& s : c.slices) slices.push_back(slice(s));
    std::vector<ResourceClaimObject> claims;
    for (const auto& d : c.allocated) claims.push_back(claimOf("n1", d));
    const auto pools = draPools(slices, claims);
    if (c.capacity.empty()) {
      EXPECT_TRUE(pools.empty());
      continue;
    }
    ASSERT_EQ(pools.size(), 1u);
    const DraPool& pool = pools.at("n1");
    EXPECT_EQ(pool.complete(), c.complete);
    EXPECT_EQ(draCapacity(pool), c.capacity);
    EXPECT_EQ(draUsed(pool), c.used);
  }
}

// For a claim-based workload: how many more pods the devices of a pool can take.
TEST(DraCapacityTest, ReplicaRoomOfAClaim) {
  struct Case {
    const char* what;
    json slice;
    std::vector<std::string> allocated;
    std::vector<std::string> selectors;  // the claim's, after the class's `type == 'mig'`
    std::int64_t perPod;
    std::int64_t room;
  };
  const std::vector<Case> cases{
      {"static: one MIG device per pod", staticSlice(), {}, {}, 1, 7},
      {"static: two per pod", staticSlice(), {}, {}, 2, 3},
      {"static: allocated ones are taken", staticSlice(), {"gpu-1-mig-1g5gb-3"}, {}, 1, 6},
      {"partitionable: 1g.5gb slices while the counters last",
       partitionableSlice(),
       {"gpu-0-mig-3g20gb-4"},
       {"device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"},
       1,
       4},
      {"partitionable: 3g.20gb",
       partitionableSlice(),
       {},
       {"device.attributes['gpu.nvidia.com'].profile == '3g.20gb'"},
       1,
       2},
      {"a selector nothing matches",
       staticSlice(),
       {},
       {"device.attributes['gpu.nvidia.com'].profile == '7g.40gb'"},
       1,
       0},
  };
  auto cls = DeviceSelector::compile(
      "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'");
  ASSERT_TRUE(cls.ok());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<ResourceClaimObject> claims;
    for (const auto& d : c.allocated) claims.push_back(claimOf("n1", d));
    const auto pools = draPools({slice(c.slice)}, claims);
    ClaimDemand demand;
    demand.perPod = c.perPod;
    demand.matchers.push_back({*cls});
    for (const auto& e : c.selectors) {
      auto s = DeviceSelector::compile(e);
      ASSERT_TRUE(s.ok()) << s.status().toString();
      demand.matchers.back().push_back(*s);
    }
    EXPECT_EQ(draReplicaRoom(pools.at("n1"), demand), c.room);
  }
  ClaimDemand problem;
  problem.perPod = 1;
  problem.problem = "firstAvailable is not modelled";
  EXPECT_EQ(draReplicaRoom(draPools({slice(staticSlice())}, {}).at("n1"), problem), 0);
}

TEST(DraCapacityTest, DeviceKindsAndModelNames) {
  auto s = slice(
      testing::draSlice("n", {testing::draGpuDevice(0), testing::draMigDevice(0, "1g.5gb+me", 0)}));
  ASSERT_EQ(s.devices.size(), 2u);
  EXPECT_EQ(draDeviceKind(s.devices[0]), "nvidia.com/gpu");
  EXPECT_EQ(draDeviceKind(s.devices[1]), "nvidia.com/mig-1g.5gb.me");
  DraDevice vfio;
  vfio.attributes["gpu.nvidia.com/type"] = {DraValue::Type::kString, "vfio", 0, false};
  EXPECT_EQ(draDeviceKind(vfio), "");
  EXPECT_EQ(capacityModelName(CapacityModel::kDevicePlugin), "device plugin");
  EXPECT_EQ(capacityModelName(CapacityModel::kDraStatic), "DRA static");
  EXPECT_EQ(capacityModelName(CapacityModel::kDraPartitionable), "DRA partitionable");
}

}  // namespace dra_capacity_test
}  // namespace gpuscale::partition
