#include "gpuscale/partition/resource_names.h"

#include <gtest/gtest.h>

namespace gpuscale::partition {
namespace resource_names_test {

TEST(ResourceNamesTest, MigResourceNames) {
  EXPECT_EQ(migResourceName("1g.5gb"), "nvidia.com/mig-1g.5gb");
  EXPECT_EQ(migResourceName("1g.5gb+me"), "nvidia.com/mig-1g.5gb.me");
  EXPECT_EQ(migResourceName("1g.24gb-me"), "nvidia.com/mig-1g.24gb-me");
  const GpuModel& a100 = *findModelByName("A100-40GB");
  EXPECT_EQ(profileForResource(a100, "nvidia.com/mig-1g.5gb.me")->name, "1g.5gb+me");
  EXPECT_EQ(profileForResource(a100, "nvidia.com/mig-3g.20gb.shared")->name, "3g.20gb");
  EXPECT_EQ(profileForResource(a100, "nvidia.com/gpu"), nullptr);
  EXPECT_EQ(unsharedResourceName("nvidia.com/gpu.shared"), "nvidia.com/gpu");
  EXPECT_EQ(unsharedResourceName("nvidia.com/gpu"), "nvidia.com/gpu");
}

struct ExposedCase {
  const char* what;
  std::vector<MigGpuSetting> gpus;
  MigStrategy strategy;
  std::optional<SharingConfig> timeSlicing;
  std::map<std::string, std::int64_t> expected;
};

TEST(ResourceNamesTest, ExposedResourcesPerStrategy) {
  const MigGpuSetting balanced{true, {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}};
  const MigGpuSetting seven{true, {{"1g.5gb", 7}}};
  const MigGpuSetting whole{false, {}};
  const ExposedCase cases[] = {
      {"none: one resource per GPU",
       {whole, whole},
       MigStrategy::kNone,
       std::nullopt,
       {{"nvidia.com/gpu", 2}}},
      {"single: MIG devices as nvidia.com/gpu",
       {seven, seven},
       MigStrategy::kSingle,
       std::nullopt,
       {{"nvidia.com/gpu", 14}}},
      {"mixed: one resource per profile",
       {balanced, seven},
       MigStrategy::kMixed,
       std::nullopt,
       {{"nvidia.com/mig-1g.5gb", 9},
        {"nvidia.com/mig-2g.10gb", 1},
        {"nvidia.com/mig-3g.20gb", 1}}},
      {"mixed with a non-MIG GPU",
       {seven, whole},
       MigStrategy::kMixed,
       std::nullopt,
       {{"nvidia.com/mig-1g.5gb", 7}, {"nvidia.com/gpu", 1}}},
      {"time-slicing multiplies per profile",
       {balanced},
       MigStrategy::kMixed,
       SharingConfig{
           false, std::nullopt, {{"nvidia.com/mig-1g.5gb", 2}, {"nvidia.com/mig-3g.20gb", 3}}},
       {{"nvidia.com/mig-1g.5gb", 4},
        {"nvidia.com/mig-2g.10gb", 1},
        {"nvidia.com/mig-3g.20gb", 3}}},
      {"T4 with 14 replicas",
       {whole},
       MigStrategy::kNone,
       SharingConfig{false, std::nullopt, {{"nvidia.com/gpu", 14}}},
       {{"nvidia.com/gpu", 14}}},
      {"renameByDefault advertises .shared",
       {whole, whole},
       MigStrategy::kNone,
       SharingConfig{true, std::nullopt, {{"nvidia.com/gpu", 4}}},
       {{"nvidia.com/gpu.shared", 8}}},
  };
  for (const auto& c : cases) {
    auto got = exposedResources(c.gpus, c.strategy, c.timeSlicing ? &*c.timeSlicing : nullptr);
    ASSERT_TRUE(got.ok()) << c.what << ": " << got.status().toString();
    EXPECT_EQ(*got, c.expected) << c.what;
  }
}

TEST(ResourceNamesTest, SingleStrategyNeedsUniformGeometry) {
  const MigGpuSetting balanced{true, {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}};
  const MigGpuSetting seven{true, {{"1g.5gb", 7}}};
  EXPECT_FALSE(exposedResources({balanced}, MigStrategy::kSingle, nullptr).ok());
  EXPECT_FALSE(
      exposedResources({seven, {true, {{"2g.10gb", 3}}}}, MigStrategy::kSingle, nullptr).ok());
  EXPECT_FALSE(exposedResources({seven, {false, {}}}, MigStrategy::kSingle, nullptr).ok());
}

}  // namespace resource_names_test
}  // namespace gpuscale::partition
