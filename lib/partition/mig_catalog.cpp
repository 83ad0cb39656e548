#include "gpuscale/partition/mig_catalog.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

namespace gpuscale::partition {
namespace {

std::vector<int> range(int first, int last) {
  std::vector<int> out;
  for (int i = first; i <= last; ++i) out.push_back(i);
  return out;
}

MigProfile profile(int g, int memGb, std::string_view suffix, int slots, std::vector<int> starts,
                   int maxCount) {
  MigProfile p;
  p.name = fmt::format("{}g.{}gb{}", g, memGb, suffix);
  p.slots = slots;
  p.computeSlices = g;
  p.starts = std::move(starts);
  p.maxCount = maxCount;
  p.memoryGb = memGb;
  p.base = suffix.empty();
  p.mediaExtension = suffix == "+me" || suffix == "+me.all";
  return p;
}

// The 8-slot, 7-compute-slice layout shared by A100, H100, H200, B200 and their relatives
// (`-lgipp`: 1g {0..6}:1, 1g-double {0,2,4,6}:2, 2g {0,2,4}:2, 3g {0,4}:4, 4g {0}:4, 7g {0}:8).
std::vector<MigProfile> eightSlotProfiles(int mem1g, int mem1gDouble, int mem2g, int mem3g, int mem4g,
                                          int mem7g) {
  return {
      profile(1, mem1g, "", 1, range(0, 6), 7),
      profile(1, mem1g, "+me", 1, range(0, 6), 1),
      profile(1, mem1gDouble, "", 2, {0, 2, 4, 6}, 4),
      profile(2, mem2g, "", 2, {0, 2, 4}, 3),
      profile(3, mem3g, "", 4, {0, 4}, 2),
      profile(4, mem4g, "", 4, {0}, 1),
      profile(7, mem7g, "", 8, {0}, 1),
  };
}

GpuModel eightSlotModel(std::string name, std::vector<std::string> families, int memoryGb,
                        std::vector<std::uint32_t> pciIds, std::vector<MigProfile> profiles,
                        std::vector<std::string> markers = {}) {
  GpuModel m;
  m.name = std::move(name);
  m.families = std::move(families);
  m.markers = std::move(markers);
  m.memoryGb = memoryGb;
  m.pciIds = std::move(pciIds);
  m.profiles = std::move(profiles);
  return m;
}

GpuModel fourSlotModel(std::string name, std::vector<std::string> families, int memoryGb,
                       std::vector<std::uint32_t> pciIds, std::vector<MigProfile> profiles) {
  GpuModel m = eightSlotModel(std::move(name), std::move(families), memoryGb, std::move(pciIds),
                              std::move(profiles));
  m.slots = 4;
  m.computeSlices = 4;
  m.maxInstances = 4;
  return m;
}

std::vector<GpuModel> buildCatalog() {
  std::vector<GpuModel> c;
  c.push_back(fourSlotModel("A30-24GB", {"A30"}, 24, {0x20B710DE},
                            {
                                profile(1, 6, "", 1, range(0, 3), 4),
                                profile(1, 6, "+me", 1, range(0, 3), 1),
                                profile(2, 12, "", 2, {0, 2}, 2),
                                profile(2, 12, "+me", 2, {0, 2}, 1),
                                profile(4, 24, "", 4, {0}, 1),
                            }));
  c.push_back(eightSlotModel("A100-40GB", {"A100", "A800"}, 40,
                             {0x20B010DE, 0x20B110DE, 0x20F110DE, 0x20F610DE},
                             eightSlotProfiles(5, 10, 10, 20, 20, 40)));
  c.push_back(eightSlotModel("A100-80GB", {"A100", "A800"}, 80,
                             {0x20B210DE, 0x20B510DE, 0x20F310DE, 0x20F510DE},
                             eightSlotProfiles(10, 20, 20, 40, 40, 80)));
  c.push_back(eightSlotModel("H100-80GB", {"H100", "H800"}, 80,
                             {0x233010DE, 0x233110DE, 0x232210DE, 0x232410DE},
                             eightSlotProfiles(10, 20, 20, 40, 40, 80)));
  c.push_back(eightSlotModel("H100-94GB", {"H100", "H800"}, 94, {0x232110DE, 0x233A10DE},
                             eightSlotProfiles(12, 24, 24, 47, 47, 94), {"NVL"}));
  c.push_back(eightSlotModel("H100-96GB", {"H100", "GH200", "H20", "PG506"}, 96,
                             {0x234210DE, 0x233D10DE, 0x20B610DE, 0x232910DE},
                             eightSlotProfiles(12, 24, 24, 48, 48, 96)));
  c.push_back(eightSlotModel("H200-141GB", {"H200"}, 141, {0x233510DE, 0x233B10DE},
                             eightSlotProfiles(18, 35, 35, 71, 71, 141)));
  c.push_back(eightSlotModel("GH200-144GB", {"GH200"}, 144, {0x234810DE},
                             eightSlotProfiles(18, 36, 36, 72, 72, 144)));
  c.push_back(eightSlotModel("B200", {"B200"}, 180, {0x290110DE},
                             eightSlotProfiles(23, 45, 45, 90, 90, 180)));
  c.push_back(eightSlotModel("GB200", {"GB200"}, 186, {0x294110DE},
                             eightSlotProfiles(23, 47, 47, 93, 93, 186)));
  c.push_back(eightSlotModel("B300", {"B300"}, 269, {0x318210DE},
                             eightSlotProfiles(34, 67, 67, 135, 135, 269)));
  c.push_back(eightSlotModel("GB300", {"GB300"}, 278, {0x31C210DE},
                             eightSlotProfiles(35, 70, 70, 139, 139, 278)));
  c.push_back(fourSlotModel("RTX-PRO-6000", {"RTX-PRO-6000"}, 96, {0x2BB510DE},
                            {
                                profile(1, 24, "", 1, range(0, 3), 4),
                                profile(1, 24, "+me", 1, range(0, 3), 1),
                                profile(1, 24, "+gfx", 1, range(0, 3), 4),
                                profile(1, 24, "+me.all", 1, range(0, 3), 1),
                                profile(1, 24, "-me", 1, range(0, 3), 4),
                                profile(2, 48, "", 2, {0, 2}, 2),
                                profile(2, 48, "+gfx", 2, {0, 2}, 2),
                                profile(2, 48, "+me.all", 2, {0, 2}, 1),
                                profile(2, 48, "-me", 2, {0, 2}, 2),
                                profile(4, 96, "", 4, {0}, 1),
                                profile(4, 96, "+gfx", 4, {0}, 1),
                            }));
  // The reference lists only names and a 2-instance limit for this part; slot sizes follow the 4-slot layout.
  GpuModel rtx5000 = fourSlotModel("RTX-PRO-5000", {"RTX-PRO-5000"}, 48, {},
                                   {
                                       profile(1, 12, "", 1, range(0, 3), 2),
                                       profile(1, 12, "+me", 1, range(0, 3), 1),
                                       profile(1, 12, "+gfx", 1, range(0, 3), 2),
                                       profile(1, 12, "-me", 1, range(0, 3), 2),
                                       profile(2, 24, "-me", 2, {0, 2}, 2),
                                       profile(4, 48, "", 4, {0}, 1),
                                       profile(4, 48, "+gfx", 4, {0}, 1),
                                   });
  rtx5000.maxInstances = 2;
  rtx5000.verified = false;
  c.push_back(std::move(rtx5000));
  return c;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

// "-NVIDIA-A100-SXM4-40GB-" with the MIG and sharing suffixes removed, so tokens match on dashes.
std::string normalizeProduct(std::string_view product) {
  std::string p = upper(product);
  if (auto mig = p.find("-MIG-"); mig != std::string::npos) p.erase(mig);
  const std::string shared = "-SHARED";
  if (p.size() >= shared.size() && p.compare(p.size() - shared.size(), shared.size(), shared) == 0) {
    p.erase(p.size() - shared.size());
  }
  std::replace(p.begin(), p.end(), ' ', '-');
  return "-" + p + "-";
}

bool hasToken(const std::string& normalized, std::string_view token) {
  return normalized.find("-" + upper(token) + "-") != std::string::npos;
}

}  // namespace

const MigProfile* GpuModel::profile(std::string_view profileName) const {
  for (const auto& p : profiles) {
    if (p.name == profileName) return &p;
  }
  return nullptr;
}

const std::vector<GpuModel>& migCatalog() {
  static const std::vector<GpuModel> catalog = buildCatalog();
  return catalog;
}

const GpuModel* findModelByName(std::string_view name) {
  for (const auto& m : migCatalog()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

const GpuModel* matchModel(std::string_view product, std::optional<std::int64_t> memoryMiB) {
  const std::string p = normalizeProduct(product);
  std::vector<const GpuModel*> family;
  for (const auto& m : migCatalog()) {
    if (std::any_of(m.families.begin(), m.families.end(),
                    [&](const std::string& f) { return hasToken(p, f); })) {
      family.push_back(&m);
    }
  }
  if (family.size() <= 1) return family.empty() ? nullptr : family.front();
  for (const GpuModel* m : family) {
    if (std::any_of(m->markers.begin(), m->markers.end(),
                    [&](const std::string& k) { return hasToken(p, k); })) {
      return m;
    }
  }
  for (const GpuModel* m : family) {
    if (hasToken(p, fmt::format("{}GB", m->memoryGb))) return m;
  }
  if (!memoryMiB || *memoryMiB <= 0) return nullptr;
  const GpuModel* best = nullptr;
  std::int64_t bestDistance = std::numeric_limits<std::int64_t>::max();
  for (const GpuModel* m : family) {
    std::int64_t distance = std::llabs(*memoryMiB - std::int64_t{m->memoryGb} * 1024);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = m;
    }
  }
  return best;
}

const GpuModel* findModelByPciId(std::uint32_t pciId) {
  for (const auto& m : migCatalog()) {
    if (std::find(m.pciIds.begin(), m.pciIds.end(), pciId) != m.pciIds.end()) return &m;
  }
  return nullptr;
}

std::string formatPciId(std::uint32_t pciId) { return fmt::format("0x{:08X}", pciId); }

std::optional<std::uint32_t> parsePciId(std::string_view text) {
  if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return std::nullopt;
  std::uint32_t value = 0;
  auto digits = text.substr(2);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return value;
}

}  // namespace gpuscale::partition
