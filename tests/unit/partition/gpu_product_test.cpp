#include "gpuscale/partition/gpu_product.h"

#include <gtest/gtest.h>

namespace gpuscale::partition {
namespace gpu_product_test {

TEST(GpuProductTest, ParsesGfdSpellings) {
  struct Row {
    const char* value;
    GpuProduct expected;
  };
  const Row rows[] = {
      {"Tesla-T4", {"Tesla-T4", "", false}},
      {"Tesla-T4-SHARED", {"Tesla-T4", "", true}},
      {"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", {"NVIDIA-A100-SXM4-40GB", "1g.5gb", false}},
      {"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED", {"NVIDIA-A100-SXM4-40GB", "1g.5gb", true}},
      {"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb+me", {"NVIDIA-H100-80GB-HBM3", "1g.10gb+me", false}},
      {"", {"", "", false}},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(parseGpuProduct(r.value), r.expected) << r.value;
    EXPECT_EQ(formatGpuProduct(parseGpuProduct(r.value)), r.value) << r.value;
  }
}

TEST(GpuProductTest, ProductLabelKeys) {
  EXPECT_EQ(productLabelResource("nvidia.com/gpu.product"), "nvidia.com/gpu");
  EXPECT_EQ(productLabelResource("nvidia.com/mig-1g.5gb.product"), "nvidia.com/mig-1g.5gb");
  EXPECT_EQ(productLabelResource("nvidia.com/mig-.product"), std::nullopt);
  EXPECT_EQ(productLabelResource("nvidia.com/gpu.count"), std::nullopt);
  EXPECT_EQ(productLabelResource("pool"), std::nullopt);
}

// A policy selector names a model (and maybe a MIG profile); GFD's sharing rename never drops a
// node out of scope.
TEST(GpuProductTest, PolicySelectionSurvivesRenames) {
  using Labels = std::map<std::string, std::string>;
  struct Row {
    const char* what;
    Labels selector;
    Labels node;
    bool selected;
  };
  // Most rows compare one product label; `gpu` spells it.
  const auto gpu = [](const char* product) { return Labels{{"nvidia.com/gpu.product", product}}; };
  const Row rows[] = {
      {"exact", gpu("Tesla-T4"), gpu("Tesla-T4"), true},
      {"after the first raise", gpu("Tesla-T4"), gpu("Tesla-T4-SHARED"), true},
      {"a selector written with the suffix selects the unshared node too", gpu("Tesla-T4-SHARED"),
       gpu("Tesla-T4"), true},
      {"another model", gpu("Tesla-T4"), gpu("Tesla-V100-SXM2-16GB"), false},
      {"a model prefix is not the model", gpu("Tesla-T"), gpu("Tesla-T4"), false},
      {"model selects its single-strategy MIG nodes", gpu("NVIDIA-A100-SXM4-40GB"),
       gpu("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"), true},
      {"a named profile must match", gpu("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"),
       gpu("NVIDIA-A100-SXM4-40GB-MIG-3g.20gb"), false},
      {"mixed per-profile label",
       {{"nvidia.com/mig-1g.5gb.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"}},
       {{"nvidia.com/mig-1g.5gb.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"}},
       true},
      {"other keys stay exact",
       {{"pool", "gpu"}, {"nvidia.com/gpu.product", "Tesla-T4"}},
       {{"pool", "gpu-2"}, {"nvidia.com/gpu.product", "Tesla-T4"}},
       false},
      {"label absent", gpu("Tesla-T4"), {}, false},
      {"empty selector", {}, {{"pool", "x"}}, true},
  };
  for (const auto& r : rows)
    EXPECT_EQ(selectsAcrossRenames(r.selector, r.node), r.selected) << r.what;
}

// A pod's nodeSelector is exact for the scheduler: a pin holds only when the sharing matches.
TEST(GpuProductTest, PinsHoldWhenTheSharingMatches) {
  struct Row {
    const char* what;
    const char* pinned;
    const char* nodeLabel;
    int replicas;
    bool holds;
  };
  const Row rows[] = {
      {"pinned shared, node not yet shared", "Tesla-T4-SHARED", "Tesla-T4", 1, false},
      {"pinned shared, replicas raised", "Tesla-T4-SHARED", "Tesla-T4", 2, true},
      {"pinned shared, shared node", "Tesla-T4-SHARED", "Tesla-T4-SHARED", 4, true},
      {"pinned unshared: a raise breaks it", "Tesla-T4", "Tesla-T4", 2, false},
      {"pinned unshared, unshared", "Tesla-T4", "Tesla-T4", 1, true},
      {"single strategy shared", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED",
       "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 3, true},
      {"single strategy, another profile", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
       "NVIDIA-A100-SXM4-40GB-MIG-2g.10gb", 1, false},
      {"another model", "Tesla-T4-SHARED", "Tesla-V100-SXM2-16GB", 2, false},
  };
  for (const auto& r : rows) {
    const auto pins = productPins({{"nvidia.com/gpu.product", r.pinned}, {"pool", "x"}});
    ASSERT_EQ(pins.size(), 1u) << r.what;
    EXPECT_EQ(pins[0].resource, "nvidia.com/gpu") << r.what;
    EXPECT_EQ(pinHolds(pins[0], r.nodeLabel, r.replicas), r.holds) << r.what;
  }
}

}  // namespace gpu_product_test
}  // namespace gpuscale::partition
