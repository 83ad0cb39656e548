#include "gpuscale/partition/mps_sharing.h"

#include <gtest/gtest.h>

namespace gpuscale::partition {
namespace mps_sharing_test {

constexpr double kGiB = 1073741824.0;
constexpr double kGB = 1e9;

TEST(MpsSharingTest, ReplicaShareSplitsMemoryAndComputeEvenly) {
  struct Case {
    const char* what;
    std::int64_t memoryMiB;
    int replicas;
    MpsReplicaShare expected;
  };
  const Case cases[] = {
      {"one replica keeps the whole GPU", 15360, 1, {15360, 100}},
      {"T4 in two", 15360, 2, {7680, 50}},
      {"T4 in three: whole MiB and whole percent, rounded down", 15360, 3, {5120, 33}},
      {"T4 in seven", 15360, 7, {2194, 14}},
      {"A100-40GB in ten (the plugin's README example)", 40960, 10, {4096, 10}},
      {"the MPS client limit", 81920, 48, {1706, 2}},
      {"replicas below one count as one", 15360, 0, {15360, 100}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(mpsReplicaShare(c.memoryMiB, c.replicas), c.expected) << c.what;
  }
}

TEST(MpsSharingTest, ReplicaLimitKeepsEveryReplicaAboveThePodsMemory) {
  struct Case {
    const char* what;
    int policyMax;
    std::optional<std::int64_t> memoryMiB;
    std::optional<double> perPodBytes;
    int expected;
  };
  const Case cases[] = {
      {"no memory need: the policy's max", 4, 15360, std::nullopt, 4},
      {"no memory need, unknown memory: the policy's max", 6, std::nullopt, std::nullopt, 6},
      {"never above 48 clients per GPU", 64, 81920, std::nullopt, 48},
      {"3 GiB pods on a 15 GiB T4: five replicas of exactly 3 GiB", 8, 15360, 3 * kGiB, 5},
      {"3.1 GiB pods on a T4: four", 8, 15360, 3.1 * kGiB, 4},
      {"the policy's max below the memory bound wins", 3, 15360, 1 * kGiB, 3},
      {"4 GB (decimal) pods on a T4: 3815 MiB each, four fit", 8, 15360, 4 * kGB, 4},
      {"8 GiB pods on a T4: not even two, no MPS", 8, 15360, 8 * kGiB, 1},
      {"a memory need on a GPU of unknown memory: no MPS", 8, std::nullopt, 1 * kGiB, 1},
      {"a policy max of 1 never shares", 1, 15360, std::nullopt, 1},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(mpsReplicaLimit(c.policyMax, c.memoryMiB, c.perPodBytes), c.expected) << c.what;
  }
}

NodeState t4Node() {
  NodeState n;
  n.name = "t4";
  n.product = "Tesla-T4";
  n.gpuMemoryGiB = 15.0;
  n.gpus = {{0, {false, {}}, false}};
  n.geometryKnown = true;
  return n;
}

TEST(MpsSharingTest, BlockersFollowTheDevicePluginsConstraints) {
  struct Case {
    const char* what;
    void (*change)(NodeState&);
    std::string resource;
    std::int64_t perPod;
    bool changeBusyNodes;
    std::string expectedStart;  // "" when MPS may change the node
  };
  const Case cases[] = {
      {"an idle whole-GPU node", [](NodeState&) {}, "nvidia.com/gpu", 1, false, ""},
      {"a node already on MPS",
       [](NodeState& n) {
         n.sharingMode = SharingMode::kMps;
         n.sharedReplicas["nvidia.com/gpu"] = 2;
       },
       "nvidia.com/gpu", 1, false, ""},
      {"the .shared name is nvidia.com/gpu", [](NodeState&) {}, "nvidia.com/gpu.shared", 1, false,
       ""},
      {"MIG resources are never MPS-shared", [](NodeState&) {}, "nvidia.com/mig-1g.5gb", 1, false,
       "MPS shares only nvidia.com/gpu"},
      {"the mixed strategy", [](NodeState& n) { n.migStrategy = MigStrategy::kMixed; },
       "nvidia.com/gpu", 1, false, "the device plugin does not run MPS under the mixed"},
      {"single strategy over MIG devices",
       [](NodeState& n) {
         n.migStrategy = MigStrategy::kSingle;
         n.gpus[0].setting = {true, {{"1g.5gb", 7}}};
       },
       "nvidia.com/gpu", 1, false, "MPS is not supported on GPUs with MIG enabled"},
      {"single strategy named in the product label",
       [](NodeState& n) {
         n.migStrategy = MigStrategy::kSingle;
         n.product = "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb";
         n.gpus.clear();
         n.geometryKnown = false;
       },
       "nvidia.com/gpu", 1, false, "MPS is not supported on GPUs with MIG enabled"},
      {"single strategy over whole GPUs is fine",
       [](NodeState& n) { n.migStrategy = MigStrategy::kSingle; }, "nvidia.com/gpu", 1, false, ""},
      {"a time-sliced node", [](NodeState& n) { n.sharedReplicas["nvidia.com/gpu"] = 4; },
       "nvidia.com/gpu", 1, false, "the node is time-sliced"},
      {"pods asking two units", [](NodeState&) {}, "nvidia.com/gpu", 2, false, "pods ask 2 units"},
      {"GPU pods on the node", [](NodeState& n) { n.hasGpuPods = true; }, "nvidia.com/gpu", 1,
       false, "GPU pods run there"},
      {"GPU pods on the node, busy nodes allowed", [](NodeState& n) { n.hasGpuPods = true; },
       "nvidia.com/gpu", 1, true, ""},
  };
  for (const auto& c : cases) {
    NodeState n = t4Node();
    c.change(n);
    const std::string got = mpsBlocker(n, c.resource, c.perPod, c.changeBusyNodes);
    if (c.expectedStart.empty()) {
      EXPECT_EQ(got, "") << c.what;
    } else {
      EXPECT_EQ(got.rfind(c.expectedStart, 0), 0u) << c.what << ": " << got;
    }
  }
}

TEST(MpsSharingTest, GpuMemoryComesFromTheWholeGpuLabel) {
  NodeState n = t4Node();
  EXPECT_EQ(gpuMemoryMiB(n), 15360);
  n.gpuMemoryGiB.reset();
  EXPECT_EQ(gpuMemoryMiB(n), std::nullopt);
}

}  // namespace mps_sharing_test
}  // namespace gpuscale::partition
