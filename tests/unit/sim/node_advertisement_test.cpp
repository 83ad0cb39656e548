#include "gpuscale/sim/node_advertisement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuscale::sim {
namespace node_advertisement_test {

using partition::DevicePluginConfig;
using partition::MigGpuSetting;
using partition::MigStrategy;

GpuNodeSpec a100(MigStrategy strategy, int gpus = 1) {
  GpuNodeSpec n;
  n.name = "a100";
  n.product = "NVIDIA-A100-SXM4-40GB";
  n.gpus = gpus;
  n.memoryMiB = 40960;
  n.migCapable = true;
  n.migStrategy = strategy;
  return n;
}

GpuNodeSpec t4() {
  GpuNodeSpec n;
  n.name = "t4";
  n.product = "Tesla-T4";
  n.memoryMiB = 15360;
  return n;
}

DevicePluginConfig plugin(const char* yaml) { return *partition::parseDevicePluginConfig(yaml); }

const MigGpuSetting kSeven{true, {{"1g.5gb", 7}}};
const MigGpuSetting kBalanced{true, {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}};
const MigGpuSetting kWhole{false, {}};

struct Case {
  const char* what;
  GpuNodeSpec node;
  std::vector<MigGpuSetting> gpus;
  std::optional<DevicePluginConfig> config;
  bool paused;
  ResourceCounts allocatable;
  Labels labels;  // a subset that must be present
  std::vector<std::string> absent;
};

TEST(NodeAdvertisementTest, ResourcesAndLabels) {
  const auto ts2Mig = plugin(
      "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/mig-1g.5gb, "
      "replicas: 2}]\n");
  const auto ts4Renamed = plugin(
      "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources: [{name: "
      "nvidia.com/gpu, replicas: 4}]\n");
  const auto ts14 = plugin(
      "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: "
      "14}]\n");
  const auto forceSingle = plugin("version: v1\nflags: {migStrategy: single}\n");
  const Case cases[] = {
      {"mixed all-1g.5gb: seven instances, per-profile GFD labels",
       a100(MigStrategy::kMixed),
       {kSeven},
       std::nullopt,
       false,
       {{"nvidia.com/mig-1g.5gb", 7}},
       {{"nvidia.com/mig.strategy", "mixed"},
        {"nvidia.com/mig-1g.5gb.count", "7"},
        {"nvidia.com/mig-1g.5gb.replicas", "1"},
        {"nvidia.com/mig-1g.5gb.memory", "5120"},
        {"nvidia.com/mig-1g.5gb.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"},
        {"nvidia.com/gpu.count", "1"},
        {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
        {"nvidia.com/gpu.sharing-strategy", "none"},
        {"nvidia.com/mps.capable", "false"},
        {"nvidia.com/mig.capable", "true"}},
       {"nvidia.com/gpu.slices.gi"}},
      {"mixed with time-slicing x2 on 1g.5gb doubles it and marks it shared",
       a100(MigStrategy::kMixed),
       {kSeven},
       ts2Mig,
       false,
       {{"nvidia.com/mig-1g.5gb", 14}},
       {{"nvidia.com/mig-1g.5gb.replicas", "2"},
        {"nvidia.com/mig-1g.5gb.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"},
        {"nvidia.com/mig-1g.5gb.sharing-strategy", "time-slicing"},
        {"nvidia.com/gpu.sharing-strategy", "time-slicing"}},
       {}},
      {"mixed all-balanced on two GPUs: one resource per profile",
       a100(MigStrategy::kMixed, 2),
       {kBalanced, kBalanced},
       std::nullopt,
       false,
       {{"nvidia.com/mig-1g.5gb", 4}, {"nvidia.com/mig-2g.10gb", 2}, {"nvidia.com/mig-3g.20gb", 2}},
       {{"nvidia.com/mig-3g.20gb.count", "2"}, {"nvidia.com/mig-3g.20gb.slices.ci", "3"}},
       {}},
      {"single strategy: MIG devices are nvidia.com/gpu, product names the profile",
       a100(MigStrategy::kSingle),
       {kSeven},
       std::nullopt,
       false,
       {{"nvidia.com/gpu", 7}},
       {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"},
        {"nvidia.com/gpu.count", "7"},
        {"nvidia.com/gpu.memory", "5120"},
        {"nvidia.com/mig.strategy", "single"}},
       {"nvidia.com/mig-1g.5gb.count"}},
      {"single strategy time-sliced: MIG devices x replicas, product -MIG-<profile>-SHARED",
       a100(MigStrategy::kSingle),
       {kSeven},
       plugin("version: v1\nflags: {migStrategy: single}\nsharing:\n  timeSlicing:\n    "
              "resources: [{name: nvidia.com/gpu, replicas: 2}]\n"),
       false,
       {{"nvidia.com/gpu", 14}},
       {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"},
        {"nvidia.com/gpu.replicas", "2"},
        {"nvidia.com/gpu.count", "7"}},
       {}},
      {"paused for a MIG change: allocatable 0, capacity kept",
       a100(MigStrategy::kMixed),
       {kSeven},
       std::nullopt,
       true,
       {{"nvidia.com/mig-1g.5gb", 0}},
       {},
       {}},
      {"T4 without sharing: one GPU",
       t4(),
       {kWhole},
       std::nullopt,
       false,
       {{"nvidia.com/gpu", 1}},
       {{"nvidia.com/gpu.replicas", "1"},
        {"nvidia.com/mig.capable", "false"},
        {"nvidia.com/gpu.product", "Tesla-T4"},
        {"nvidia.com/mig.strategy", "none"}},
       {}},
      {"T4 time-slicing x14 (the story's manual step): 14 units, -SHARED product",
       t4(),
       {kWhole},
       ts14,
       false,
       {{"nvidia.com/gpu", 14}},
       {{"nvidia.com/gpu.replicas", "14"},
        {"nvidia.com/gpu.product", "Tesla-T4-SHARED"},
        {"nvidia.com/gpu.sharing-strategy", "time-slicing"}},
       {}},
      {"renameByDefault advertises nvidia.com/gpu.shared and keeps the product name",
       t4(),
       {kWhole},
       ts4Renamed,
       false,
       {{"nvidia.com/gpu.shared", 4}},
       {{"nvidia.com/gpu.replicas", "4"}, {"nvidia.com/gpu.product", "Tesla-T4"}},
       {}},
      {"T4 MPS x4: four units, -SHARED product, sharing strategy mps, MPS daemon wanted",
       t4(),
       {kWhole},
       plugin("version: v1\nsharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: "
              "4}]\n"),
       false,
       {{"nvidia.com/gpu", 4}},
       {{"nvidia.com/gpu.replicas", "4"},
        {"nvidia.com/gpu.product", "Tesla-T4-SHARED"},
        {"nvidia.com/gpu.sharing-strategy", "mps"},
        {"nvidia.com/mps.capable", "true"}},
       {}},
      {"MPS with renameByDefault advertises nvidia.com/gpu.shared",
       t4(),
       {kWhole},
       plugin("version: v1\nsharing:\n  mps:\n    renameByDefault: true\n    resources: [{name: "
              "nvidia.com/gpu, replicas: 3}]\n"),
       false,
       {{"nvidia.com/gpu.shared", 3}},
       {{"nvidia.com/gpu.product", "Tesla-T4"}, {"nvidia.com/gpu.sharing-strategy", "mps"}},
       {}},
      {"MPS on whole GPUs under the single strategy",
       a100(MigStrategy::kSingle),
       {kWhole},
       plugin("version: v1\nflags: {migStrategy: single}\nsharing:\n  mps:\n    resources: "
              "[{name: nvidia.com/gpu, replicas: 2}]\n"),
       false,
       {{"nvidia.com/gpu", 2}},
       {{"nvidia.com/gpu.sharing-strategy", "mps"}},
       {}},
      {"the config's migStrategy overrides the node's",
       a100(MigStrategy::kMixed),
       {kSeven},
       forceSingle,
       false,
       {{"nvidia.com/gpu", 7}},
       {{"nvidia.com/mig.strategy", "single"}},
       {}},
  };
  for (const auto& c : cases) {
    auto adv = advertise(c.node, c.gpus, c.config ? &*c.config : nullptr, c.paused);
    EXPECT_EQ(adv.error, "") << c.what;
    EXPECT_EQ(adv.allocatable, c.allocatable) << c.what;
    if (c.paused) {
      EXPECT_EQ(adv.capacity.at("nvidia.com/mig-1g.5gb"), 7) << c.what;
    }
    for (const auto& [k, v] : c.labels) {
      auto it = adv.labels.find(k);
      ASSERT_NE(it, adv.labels.end()) << c.what << ": missing " << k;
      EXPECT_EQ(it->second, v) << c.what << ": " << k;
    }
    for (const auto& k : c.absent) EXPECT_FALSE(adv.labels.contains(k)) << c.what << ": " << k;
    for (const auto& [k, v] : adv.labels) EXPECT_TRUE(isGfdLabel(k)) << c.what << ": " << k;
  }
}

TEST(NodeAdvertisementTest, SingleStrategyOverMixedGeometryIsAPluginError) {
  auto adv = advertise(a100(MigStrategy::kSingle), {kBalanced}, nullptr, false);
  EXPECT_NE(adv.error, "");
  EXPECT_TRUE(adv.allocatable.empty());
}

TEST(NodeAdvertisementTest, MpsTheDevicePluginRefuses) {
  struct Refused {
    const char* what;
    GpuNodeSpec node;
    std::vector<MigGpuSetting> gpus;
    const char* config;
    const char* error;
  };
  const Refused cases[] = {
      {"the mixed strategy",
       a100(MigStrategy::kMixed),
       {kWhole},
       "version: v1\nsharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n",
       "using --mig-strategy=mixed is not supported with MPS"},
      {"MIG devices under the single strategy",
       a100(MigStrategy::kSingle),
       {kSeven},
       "version: v1\nsharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n",
       "sharing using MPS is not supported for MIG devices"},
      {"a MIG resource",
       a100(MigStrategy::kNone),
       {kWhole},
       "version: v1\nsharing:\n  mps:\n    resources: [{name: nvidia.com/mig-1g.5gb, replicas: "
       "2}]\n",
       "MPS shares only nvidia.com/gpu, not nvidia.com/mig-1g.5gb"},
  };
  for (const auto& c : cases) {
    const DevicePluginConfig config = plugin(c.config);
    auto adv = advertise(c.node, c.gpus, &config, false);
    EXPECT_EQ(adv.error, c.error) << c.what;
    EXPECT_TRUE(adv.allocatable.empty()) << c.what;
  }
}

TEST(NodeAdvertisementTest, UnitsOfOneGpu) {
  const auto ts2Mig = plugin(
      "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/mig-1g.5gb, "
      "replicas: 2}]\n");
  EXPECT_EQ(unitsOfGpu(a100(MigStrategy::kMixed), kBalanced, &ts2Mig),
            (ResourceCounts{{"nvidia.com/mig-1g.5gb", 4},
                            {"nvidia.com/mig-2g.10gb", 1},
                            {"nvidia.com/mig-3g.20gb", 1}}));
}

TEST(NodeAdvertisementTest, GfdLabelOwnership) {
  for (const char* key : {"nvidia.com/gpu.product", "nvidia.com/mig-1g.5gb.count",
                          "nvidia.com/mig.strategy", "nvidia.com/mps.capable"}) {
    EXPECT_TRUE(isGfdLabel(key)) << key;
  }
  // Labels other components own (the operator's deploy switches, mig-manager, the device plugin).
  for (const char* key : {"nvidia.com/gpu.deploy.device-plugin", "nvidia.com/mig.config",
                          "nvidia.com/mig.config.state", "nvidia.com/device-plugin.config",
                          "kubernetes.io/hostname"}) {
    EXPECT_FALSE(isGfdLabel(key)) << key;
  }
}

}  // namespace node_advertisement_test
}  // namespace gpuscale::sim
