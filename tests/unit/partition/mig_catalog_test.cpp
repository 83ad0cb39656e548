#include "gpuscale/partition/mig_catalog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace gpuscale::partition {
namespace mig_catalog_test {

struct MatchCase {
  const char* what;
  const char* product;
  std::optional<std::int64_t> memoryMiB;
  const char* model;  // "" = no match
};

TEST(MigCatalogTest, MatchesProductAndMemoryLabels) {
  const MatchCase cases[] = {
      {"A100 SXM 40GB by name", "NVIDIA-A100-SXM4-40GB", 40960, "A100-40GB"},
      {"A100 PCIe 80GB by name", "NVIDIA-A100-PCIE-80GB", 81920, "A100-80GB"},
      {"A100 without size uses memory", "NVIDIA-A100-SXM4", 81920, "A100-80GB"},
      {"single-strategy suffix is ignored", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", std::nullopt,
       "A100-40GB"},
      {"shared suffix is ignored", "NVIDIA-A100-SXM4-80GB-SHARED", 81920, "A100-80GB"},
      {"A800 belongs to the A100 family", "NVIDIA-A800-SXM4-40GB", 40960, "A100-40GB"},
      {"A30", "NVIDIA-A30", 24576, "A30-24GB"},
      {"H100 SXM 80GB", "NVIDIA-H100-80GB-HBM3", 81559, "H100-80GB"},
      {"H100 NVL by marker", "NVIDIA-H100-NVL", 95830, "H100-94GB"},
      {"H100 96GB by name", "NVIDIA-H100-96GB-HBM3", 97871, "H100-96GB"},
      {"H20", "NVIDIA-H20", 97871, "H100-96GB"},
      {"GH200 96GB by memory", "NVIDIA-GH200-480GB", 97871, "H100-96GB"},
      {"GH200 144GB by memory", "NVIDIA-GH200-624GB", 146944, "GH200-144GB"},
      {"H200", "NVIDIA-H200", 143771, "H200-141GB"},
      {"H200 NVL", "NVIDIA-H200-NVL", 143771, "H200-141GB"},
      {"B200", "NVIDIA-B200", 183359, "B200"},
      {"GB200", "NVIDIA-GB200", 189471, "GB200"},
      {"B300", "NVIDIA-B300-SXM6-AC", 275040, "B300"},
      {"GB300", "NVIDIA-GB300", 284208, "GB300"},
      {"RTX PRO 6000", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", 97887, "RTX-PRO-6000"},
      {"T4 is not MIG-capable", "Tesla-T4", 15360, ""},
      {"L40S is not MIG-capable", "NVIDIA-L40S", 46068, ""},
      {"ambiguous family without memory", "NVIDIA-A100-SXM4", std::nullopt, ""},
  };
  for (const auto& c : cases) {
    const GpuModel* m = matchModel(c.product, c.memoryMiB);
    EXPECT_EQ(m == nullptr ? std::string() : m->name, c.model) << c.what;
  }
}

TEST(MigCatalogTest, EveryProfileFitsItsModel) {
  for (const auto& model : migCatalog()) {
    std::set<std::string> names;
    for (const auto& p : model.profiles) {
      EXPECT_TRUE(names.insert(p.name).second) << model.name << " lists " << p.name << " twice";
      EXPECT_FALSE(p.starts.empty()) << model.name << " " << p.name;
      for (int s : p.starts) {
        EXPECT_GE(s, 0) << model.name << " " << p.name;
        EXPECT_LE(s + p.slots, model.slots) << model.name << " " << p.name << " start " << s;
      }
      EXPECT_LE(p.computeSlices, model.computeSlices) << model.name << " " << p.name;
      EXPECT_GE(p.maxCount, 1) << model.name << " " << p.name;
    }
  }
}

TEST(MigCatalogTest, CoversTheReferenceModels) {
  for (const char* name :
       {"A30-24GB", "A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H100-96GB", "H200-141GB",
        "GH200-144GB", "B200", "GB200", "B300", "GB300", "RTX-PRO-6000", "RTX-PRO-5000"}) {
    EXPECT_NE(findModelByName(name), nullptr) << name;
  }
  const GpuModel* a100 = findModelByName("A100-40GB");
  ASSERT_NE(a100, nullptr);
  const MigProfile* double1g = a100->profile("1g.10gb");
  ASSERT_NE(double1g, nullptr);
  EXPECT_EQ(double1g->slots, 2);
  EXPECT_EQ(double1g->starts, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(a100->profile("3g.20gb")->starts, (std::vector<int>{0, 4}));
  EXPECT_TRUE(a100->profile("1g.5gb+me")->mediaExtension);
  EXPECT_FALSE(a100->profile("1g.5gb+me")->base);
}

TEST(MigCatalogTest, PciIdsRoundTripAndFindTheirModel) {
  for (const auto& model : migCatalog()) {
    for (auto id : model.pciIds) {
      EXPECT_EQ(parsePciId(formatPciId(id)), id);
      EXPECT_EQ(findModelByPciId(id), &model) << formatPciId(id);
    }
  }
  EXPECT_EQ(parsePciId("0x20b010de"), 0x20B010DEu);
  EXPECT_FALSE(parsePciId("20B010DE").has_value());
  EXPECT_FALSE(parsePciId("0xZZ").has_value());
  EXPECT_EQ(findModelByPciId(0x12345678), nullptr);
}

}  // namespace mig_catalog_test
}  // namespace gpuscale::partition
