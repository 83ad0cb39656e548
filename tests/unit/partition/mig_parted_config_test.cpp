#include "gpuscale/partition/mig_parted_config.h"

#include <gtest/gtest.h>

#include "kube_objects.h"
#include "support/rejected_inputs.h"

namespace gpuscale::partition {
namespace mig_parted_config_test {

using gpuscale::testing::expectAllRejected;
using gpuscale::testing::RejectedInput;

MigPartedConfig defaultConfig() {
  auto parsed = parseMigPartedConfig(testing::readDataFile("mig-parted-default-config.yaml"));
  EXPECT_TRUE(parsed.ok()) << parsed.status().toString();
  return parsed.ok() ? *parsed : MigPartedConfig{};
}

TEST(MigPartedConfigTest, ParsesTheOperatorDefaultConfig) {
  MigPartedConfig c = defaultConfig();
  EXPECT_EQ(c.configs.size(), 81u);
  ASSERT_EQ(c.configs.count("all-disabled"), 1u);
  EXPECT_FALSE(c.configs["all-disabled"].front().migEnabled);
  ASSERT_EQ(c.configs.count("all-enabled"), 1u);
  EXPECT_TRUE(c.configs["all-enabled"].front().migEnabled);
  EXPECT_TRUE(c.configs["all-enabled"].front().migDevices.empty());
}

TEST(MigPartedConfigTest, EmitParseRoundTrip) {
  MigPartedConfig c = defaultConfig();
  auto again = parseMigPartedConfig(emitMigPartedConfig(c));
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ(*again, c);
}

struct ResolveCase {
  const char* what;
  const char* config;
  const char* model;
  int index;
  std::optional<std::string> geometry;  // nullopt: GPU untouched
};

TEST(MigPartedConfigTest, ResolvesPerGpuSettings) {
  MigPartedConfig c = defaultConfig();
  const ResolveCase cases[] = {
      {"all-balanced on A100-40GB", "all-balanced", "A100-40GB", 0, "1g.5gb:2,2g.10gb:1,3g.20gb:1"},
      {"all-balanced on A30", "all-balanced", "A30-24GB", 3, "1g.6gb:2,2g.12gb:1"},
      {"all-balanced on H100-80GB", "all-balanced", "H100-80GB", 1,
       "1g.10gb:2,2g.20gb:1,3g.40gb:1"},
      {"all-1g.10gb on 40GB parts is the 2-slot 1g", "all-1g.10gb", "A100-40GB", 0, "1g.10gb:4"},
      {"all-1g.10gb on 80GB parts", "all-1g.10gb", "A100-80GB", 0, "1g.10gb:7"},
      {"all-1g.5gb has no device filter", "all-1g.5gb", "A100-40GB", 5, "1g.5gb:7"},
      {"unknown config name", "no-such-config", "A100-40GB", 0, std::nullopt},
  };
  for (const auto& rc : cases) {
    auto s = resolveMigConfig(c, rc.config, findModelByName(rc.model), rc.index);
    ASSERT_EQ(s.has_value(), rc.geometry.has_value()) << rc.what;
    if (s) {
      EXPECT_EQ(formatGeometry(s->geometry), *rc.geometry) << rc.what;
    }
  }
  EXPECT_FALSE(resolveMigConfig(c, "all-balanced", nullptr, 0).has_value())
      << "device-filter entries never match an unknown model";
}

TEST(MigPartedConfigTest, EveryFilteredDefaultGeometryIsValidForItsModels) {
  for (const auto& [name, entries] : defaultConfig().configs) {
    for (const auto& e : entries) {
      for (auto id : e.deviceFilter) {
        const GpuModel* model = findModelByPciId(id);
        if (model == nullptr) continue;
        EXPECT_TRUE(isValidGeometry(*model, e.migDevices))
            << name << " on " << model->name << ": " << formatGeometry(e.migDevices);
      }
    }
  }
}

TEST(MigPartedConfigTest, RejectsMalformedFiles) {
  const RejectedInput<> cases[] = {
      {"wrong version", "version: v2\nmig-configs: {}\n", "version must be v1"},
      {"missing version", "mig-configs: {}\n", "missing required field \"version\""},
      {"unknown top-level field", "version: v1\nextra: 1\n", "unexpected field \"extra\""},
      {"unknown entry field",
       "version: v1\nmig-configs:\n  a:\n  - devices: all\n    mig-enabled: true\n    mig-devices: "
       "{}\n"
       "    colour: red\n",
       "line 7"},
      {"mig-devices with MIG disabled",
       "version: v1\nmig-configs:\n  a:\n  - devices: all\n    mig-enabled: false\n    "
       "mig-devices: "
       "{\"1g.5gb\": 1}\n",
       "must be empty"},
      {"negative count",
       "version: v1\nmig-configs:\n  a:\n  - devices: all\n    mig-enabled: true\n    mig-devices: "
       "{\"1g.5gb\": -1}\n",
       "negative"},
      {"bad device filter",
       "version: v1\nmig-configs:\n  a:\n  - device-filter: nvidia\n    devices: all\n    "
       "mig-enabled: false\n",
       "PCI ids"},
      {"missing devices", "version: v1\nmig-configs:\n  a:\n  - mig-enabled: false\n",
       "\"devices\""},
      {"empty config list", "version: v1\nmig-configs:\n  a: []\n", "non-empty"},
      {"not YAML", "version: [v1\n", "line"},
  };
  expectAllRejected(cases, parseMigPartedConfig);
}

TEST(MigPartedConfigTest, PerGpuEntriesGroupEqualGeometriesAndRestateUntouchedGpus) {
  std::vector<MigGpuSetting> gpus{
      {true, {{"3g.40gb", 2}}}, {true, {{"1g.10gb", 7}}}, {true, {{"3g.40gb", 2}}}, {false, {}}};
  auto entries = perGpuEntries(gpus);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].devices, (std::vector<int>{0, 2}));
  EXPECT_EQ(entries[1].devices, (std::vector<int>{1}));
  EXPECT_FALSE(entries[2].migEnabled);
  MigPartedConfig file;
  file.configs["gpuscale-node-1"] = entries;
  auto parsed = parseMigPartedConfig(emitMigPartedConfig(file));
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  for (int i = 0; i < 4; ++i) {
    auto s = resolveMigConfig(*parsed, "gpuscale-node-1", nullptr, i);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(*s, gpus[i]) << "gpu " << i;
  }
  EXPECT_FALSE(resolveMigConfig(*parsed, "gpuscale-node-1", nullptr, 4).has_value());
}

TEST(MigPartedConfigTest, CarryOverAddsOnlyMissingNamesEarlierSourceFirst) {
  const MigConfigEntry off;
  const MigConfigEntry one{{}, true, {}, true, {{"1g.5gb", 7}}};
  const MigConfigEntry two{{}, true, {}, true, {{"2g.10gb", 3}}};
  auto file = [](std::map<std::string, std::vector<MigConfigEntry>> c) {
    return MigPartedConfig{std::move(c)};
  };
  struct Row {
    const char* what;
    MigPartedConfig into;
    std::vector<MigPartedConfig> sources;
    MigPartedConfig expected;
    int added;
  };
  const std::vector<Row> rows{
      {"nothing to carry", file({{"a", {one}}}), {}, file({{"a", {one}}}), 0},
      {"a missing stock name is added",
       file({{"mine", {one}}}),
       {file({{"all-balanced", {two}}})},
       file({{"mine", {one}}, {"all-balanced", {two}}}),
       1},
      {"an existing name keeps its entries",
       file({{"all-balanced", {one}}}),
       {file({{"all-balanced", {two}}})},
       file({{"all-balanced", {one}}}),
       0},
      {"the earlier source wins",
       file({}),
       {file({{"x", {two}}}), file({{"x", {off}}, {"y", {off}}})},
       file({{"x", {two}}, {"y", {off}}}),
       2},
  };
  for (auto row : rows) {
    EXPECT_EQ(carryOverConfigs(row.into, row.sources), row.added) << row.what;
    EXPECT_EQ(row.into, row.expected) << row.what;
  }
}

}  // namespace mig_parted_config_test
}  // namespace gpuscale::partition
