#include "gpuscale/sim/operator_config.h"

#include <gtest/gtest.h>

#include "gpuscale/partition/mig_catalog.h"

namespace gpuscale::sim {
namespace operator_config_test {

using partition::MigGeometry;
using partition::MigGpuSetting;

GpuNodeSpec node(const char* product, int64_t memoryMiB, int gpus = 1) {
  GpuNodeSpec n;
  n.name = "n";
  n.product = product;
  n.memoryMiB = memoryMiB;
  n.gpus = gpus;
  n.migCapable = true;
  return n;
}

struct Case {
  const char* what;
  GpuNodeSpec node;
  const char* config;
  std::optional<MigGpuSetting> expected;  // nullopt: name not found
};

TEST(OperatorConfigTest, DefaultConfigsResolvePerModel) {
  const std::vector<partition::MigPartedConfig> configs = {defaultMigPartedConfig()};
  const Case cases[] = {
      {"A100-40GB all-1g.5gb: seven", node("NVIDIA-A100-SXM4-40GB", 40960), "all-1g.5gb",
       MigGpuSetting{true, {{"1g.5gb", 7}}}},
      {"A100-40GB all-balanced", node("NVIDIA-A100-SXM4-40GB", 40960), "all-balanced",
       MigGpuSetting{true, {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}}},
      {"A100-40GB all-1g.10gb: the 2-slot 1g, four", node("NVIDIA-A100-SXM4-40GB", 40960),
       "all-1g.10gb", MigGpuSetting{true, {{"1g.10gb", 4}}}},
      {"A100-80GB all-1g.10gb: seven", node("NVIDIA-A100-SXM4-80GB", 81920), "all-1g.10gb",
       MigGpuSetting{true, {{"1g.10gb", 7}}}},
      {"A100-80GB all-balanced", node("NVIDIA-A100-SXM4-80GB", 81920), "all-balanced",
       MigGpuSetting{true, {{"1g.10gb", 2}, {"2g.20gb", 1}, {"3g.40gb", 1}}}},
      {"A30 all-balanced on four slices", node("NVIDIA-A30", 24576), "all-balanced",
       MigGpuSetting{true, {{"1g.6gb", 2}, {"2g.12gb", 1}}}},
      {"media variant spelled with a dot", node("NVIDIA-A100-SXM4-40GB", 40960), "all-1g.5gb.me",
       MigGpuSetting{true, {{"1g.5gb+me", 1}}}},
      {"all-disabled", node("NVIDIA-A100-SXM4-40GB", 40960), "all-disabled",
       MigGpuSetting{false, {}}},
      {"all-enabled: MIG on, no instances", node("NVIDIA-A100-SXM4-40GB", 40960), "all-enabled",
       MigGpuSetting{true, {}}},
      {"unknown name", node("NVIDIA-A100-SXM4-40GB", 40960), "all-9g.99gb", std::nullopt},
  };
  for (const auto& c : cases) {
    ASSERT_NE(partition::matchModel(c.node.product, c.node.memoryMiB), nullptr) << c.what;
    auto r = resolveNodeMigConfig(configs, c.node, c.config, {MigGpuSetting{}});
    if (!c.expected) {
      EXPECT_FALSE(r) << c.what;
      continue;
    }
    ASSERT_TRUE(r) << c.what;
    EXPECT_EQ(r->at(0), *c.expected) << c.what;
  }
}

TEST(OperatorConfigTest, EveryDefaultConfigRoundTripsThroughTheFileFormat) {
  const auto config = defaultMigPartedConfig();
  auto parsed = partition::parseMigPartedConfig(partition::emitMigPartedConfig(config));
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  EXPECT_EQ(*parsed, config);
}

TEST(OperatorConfigTest, CustomConfigFirstAndUnselectedGpusKept) {
  auto custom = partition::parseMigPartedConfig(
      "version: v1\nmig-configs:\n  all-1g.5gb:\n    - devices: [1]\n      mig-enabled: true\n"
      "      mig-devices: {\"3g.20gb\": 2}\n");
  ASSERT_TRUE(custom.ok()) << custom.status().toString();
  const std::vector<partition::MigPartedConfig> configs = {*custom, defaultMigPartedConfig()};
  const MigGpuSetting current{true, {{"2g.10gb", 3}}};
  auto r = resolveNodeMigConfig(configs, node("NVIDIA-A100-SXM4-40GB", 40960, 2), "all-1g.5gb",
                                {current, current});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at(0), current) << "GPU 0 is selected by no entry of the custom config";
  EXPECT_EQ(r->at(1), (MigGpuSetting{true, {{"3g.20gb", 2}}}));
}

TEST(OperatorConfigTest, ConfigMapsMigManagerReads) {
  OperatorSpec op;
  EXPECT_EQ(migConfigMapsFor(op, "n1"),
            (std::vector<std::string>{"n1-mig-config", "default-mig-parted-config"}))
      << "no custom ConfigMap: the generated one, the default only as a fallback";
  op.customMigConfigMap = "custom";
  EXPECT_EQ(migConfigMapsFor(op, "n1"), (std::vector<std::string>{"custom"}))
      << "ClusterPolicy migManager.config.name: that ConfigMap and nothing else";
  auto cm = configMapObject("gpu-operator", "x", {{"config.yaml", "v"}});
  EXPECT_EQ(cm["metadata"]["namespace"], "gpu-operator");
  EXPECT_EQ(cm["data"]["config.yaml"], "v");
}

// Under a custom ConfigMap a stock name resolves only if the custom ConfigMap carries it.
TEST(OperatorConfigTest, StockNamesResolveUnderACustomConfigMapOnlyWhenCarried) {
  auto custom = partition::parseMigPartedConfig(
      "version: v1\nmig-configs:\n  mine:\n    - devices: all\n      mig-enabled: true\n"
      "      mig-devices: {\"3g.20gb\": 2}\n");
  ASSERT_TRUE(custom.ok()) << custom.status().toString();
  const auto a100 = node("NVIDIA-A100-SXM4-40GB", 40960);
  EXPECT_FALSE(resolveNodeMigConfig({*custom}, a100, "all-balanced", {MigGpuSetting{}}));
  EXPECT_TRUE(resolveNodeMigConfig({*custom}, a100, "mine", {MigGpuSetting{}}));
  auto carried = *custom;
  carried.configs["all-balanced"] = defaultMigPartedConfig().configs.at("all-balanced");
  auto r = resolveNodeMigConfig({carried}, a100, "all-balanced", {MigGpuSetting{}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->at(0), (MigGpuSetting{true, {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}}));
}

TEST(OperatorConfigTest, GeneratedConfigIsTheDefaultsForOneModelWithoutFilters) {
  const partition::GpuModel* a100 = partition::matchModel("NVIDIA-A100-SXM4-40GB", 40960);
  ASSERT_NE(a100, nullptr);
  const auto generated = generatedMigPartedConfig(a100);
  EXPECT_TRUE(generatedMigPartedConfig(nullptr).configs.empty());
  for (const auto& [name, entries] : generated.configs) {
    for (const auto& e : entries) EXPECT_TRUE(e.deviceFilter.empty()) << name;
  }
  EXPECT_FALSE(generated.configs.contains("all-1g.6gb")) << "an A30 profile";
  const auto balanced = resolveNodeMigConfig({generated}, node("NVIDIA-A100-SXM4-40GB", 40960),
                                             "all-balanced", {MigGpuSetting{}});
  ASSERT_TRUE(balanced);
  EXPECT_EQ(balanced->at(0),
            (MigGpuSetting{true, {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}}));
  ASSERT_TRUE(generated.configs.contains("all-disabled"));
  ASSERT_TRUE(generated.configs.contains("all-1g.5gb"));
}

}  // namespace operator_config_test
}  // namespace gpuscale::sim
