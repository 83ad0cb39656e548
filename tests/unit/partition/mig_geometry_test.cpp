#include "gpuscale/partition/mig_geometry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace gpuscale::partition {
namespace mig_geometry_test {

// An independent oracle: tries every start slot for every instance (no shared code with the
// walker).
bool bruteForceValid(const GpuModel& model, const std::vector<const MigProfile*>& instances,
                     std::size_t next, unsigned used) {
  if (next == instances.size()) return true;
  const MigProfile& p = *instances[next];
  for (int s : p.starts) {
    unsigned mask = ((1u << p.slots) - 1u) << s;
    if (s + p.slots <= model.slots && (used & mask) == 0 &&
        bruteForceValid(model, instances, next + 1, used | mask)) {
      return true;
    }
  }
  return false;
}

bool oracleValid(const GpuModel& model, const MigGeometry& g) {
  std::vector<const MigProfile*> instances;
  int compute = 0, media = 0;
  for (const auto& [name, count] : g) {
    const MigProfile* p = model.profile(name);
    if (p == nullptr || count > p->maxCount) return false;
    for (int i = 0; i < count; ++i) instances.push_back(p);
    compute += p->computeSlices * count;
    media += p->mediaExtension ? count : 0;
  }
  if (compute > model.computeSlices || media > 1 ||
      static_cast<int>(instances.size()) > model.maxInstances) {
    return false;
  }
  return bruteForceValid(model, instances, 0, 0);
}

// Every multiset of profiles whose slots fit the GPU (a superset of the valid ones).
void candidateGeometries(const GpuModel& model, std::size_t profile, int slotsLeft,
                         MigGeometry& current, std::vector<MigGeometry>& out) {
  if (profile == model.profiles.size()) {
    if (!current.empty()) out.push_back(current);
    return;
  }
  const MigProfile& p = model.profiles[profile];
  candidateGeometries(model, profile + 1, slotsLeft, current, out);
  for (int n = 1; n <= p.maxCount && n * p.slots <= slotsLeft; ++n) {
    current[p.name] = n;
    candidateGeometries(model, profile + 1, slotsLeft - n * p.slots, current, out);
  }
  current.erase(p.name);
}

TEST(MigGeometryTest, EveryEnumeratedGeometryIsValidAndEveryValidOneIsFound) {
  for (const auto& model : migCatalog()) {
    auto enumerated = enumerateGeometries(model);
    std::set<MigGeometry> found(enumerated.begin(), enumerated.end());
    EXPECT_EQ(found.size(), enumerated.size()) << model.name << " lists a geometry twice";
    for (const auto& g : enumerated) {
      auto placement = placeGeometry(model, g);
      ASSERT_TRUE(placement.has_value()) << model.name << " " << formatGeometry(g);
      unsigned used = 0;
      for (const auto& p : *placement) {
        const MigProfile* profile = model.profile(p.profile);
        ASSERT_NE(profile, nullptr);
        EXPECT_NE(std::find(profile->starts.begin(), profile->starts.end(), p.start),
                  profile->starts.end())
            << model.name << " " << p.profile << "@" << p.start;
        unsigned mask = ((1u << p.slots) - 1u) << p.start;
        EXPECT_EQ(used & mask, 0u) << model.name << " overlapping " << formatGeometry(g);
        used |= mask;
      }
      EXPECT_TRUE(oracleValid(model, g)) << model.name << " " << formatGeometry(g);
    }
    std::vector<MigGeometry> candidates;
    MigGeometry scratch;
    candidateGeometries(model, 0, model.slots, scratch, candidates);
    for (const auto& g : candidates) {
      EXPECT_EQ(oracleValid(model, g), found.count(g) == 1)
          << model.name << " " << formatGeometry(g);
    }
  }
}

std::vector<std::string> formatted(const std::vector<MigGeometry>& gs) {
  std::vector<std::string> out;
  for (const auto& g : gs) out.push_back(formatGeometry(g));
  return out;
}

struct MaximalCase {
  const char* what;
  const char* model;
  std::set<std::string> profiles;
  bool baseOnly;
  std::size_t count;
  std::vector<std::string> mustInclude;
};

TEST(MigGeometryTest, MaximalGeometriesMatchTheReference) {
  const MaximalCase cases[] = {
      {"A100-40GB without the 2-slot 1g and +me: the 12 layouts of the reference",
       "A100-40GB",
       {"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"},
       false,
       12,
       {"1g.5gb:7", "1g.5gb:5,2g.10gb:1", "1g.5gb:4,3g.20gb:1", "1g.5gb:3,2g.10gb:2",
        "1g.5gb:3,4g.20gb:1", "1g.5gb:2,2g.10gb:1,3g.20gb:1", "1g.5gb:1,2g.10gb:3",
        "1g.5gb:1,2g.10gb:1,4g.20gb:1", "2g.10gb:2,3g.20gb:1", "3g.20gb:2", "3g.20gb:1,4g.20gb:1",
        "7g.40gb:1"}},
      {"A100-40GB base profiles incl. the 2-slot 1g: 28 layouts",
       "A100-40GB",
       {},
       true,
       28,
       {"1g.10gb:4", "1g.10gb:1,1g.5gb:6", "1g.10gb:1,2g.10gb:1,4g.20gb:1"}},
      {"H100-80GB has the same 28 shapes", "H100-80GB", {}, true, 28, {"1g.20gb:4", "1g.10gb:7"}},
      {"A30 base profiles: the 4 layouts of the reference",
       "A30-24GB",
       {},
       true,
       4,
       {"1g.6gb:4", "1g.6gb:2,2g.12gb:1", "2g.12gb:2", "4g.24gb:1"}},
  };
  for (const auto& c : cases) {
    const GpuModel* model = findModelByName(c.model);
    ASSERT_NE(model, nullptr) << c.what;
    auto got = formatted(maximalGeometries(*model, ProfileFilter{c.profiles, c.baseOnly}));
    EXPECT_EQ(got.size(), c.count) << c.what;
    for (const auto& g : c.mustInclude) {
      EXPECT_NE(std::find(got.begin(), got.end(), g), got.end()) << c.what << ": missing " << g;
    }
  }
}

struct ValidityCase {
  const char* what;
  const char* geometry;
  bool valid;
};

TEST(MigGeometryTest, ValidityOnA100_40GB) {
  const GpuModel& a100 = *findModelByName("A100-40GB");
  const ValidityCase cases[] = {
      {"all-balanced", "1g.5gb:2,2g.10gb:1,3g.20gb:1", true},
      {"three 2g and a 1g fill slots 0..6", "1g.5gb:1,2g.10gb:3", true},
      {"4g and 3g share the GPU on current drivers", "3g.20gb:1,4g.20gb:1", true},
      {"four 2g do not fit (2g never starts at 6)", "2g.10gb:4", false},
      {"eight 1g exceed the 1g maximum", "1g.5gb:8", false},
      {"two +me instances", "1g.5gb+me:2", false},
      {"+me next to plain 1g", "1g.5gb+me:1,1g.5gb:6", true},
      {"7g with anything else", "1g.5gb:1,7g.40gb:1", false},
      {"unknown profile", "1g.10gb:1,9g.99gb:1", false},
      {"2-slot 1g fills slot 7", "1g.10gb:1,1g.5gb:6", true},
  };
  for (const auto& c : cases) {
    auto g = parseGeometry(c.geometry);
    ASSERT_TRUE(g.ok()) << c.what;
    EXPECT_EQ(isValidGeometry(a100, *g), c.valid) << c.what;
  }
}

TEST(MigGeometryTest, WitnessPlacementOfAllBalanced) {
  auto placement =
      placeGeometry(*findModelByName("A100-40GB"), {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}});
  ASSERT_TRUE(placement.has_value());
  int slots = 0;
  for (const auto& p : *placement) slots += p.slots;
  EXPECT_EQ(slots, 8);
  EXPECT_EQ(placement->back().profile, "3g.20gb");
  EXPECT_EQ(placement->back().start, 4);
}

TEST(MigGeometryTest, FormatAndParseRoundTrip) {
  MigGeometry g{{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}};
  EXPECT_EQ(formatGeometry(g), "1g.5gb:2,2g.10gb:1,3g.20gb:1");
  EXPECT_EQ(*parseGeometry(formatGeometry(g)), g);
  EXPECT_TRUE(parseGeometry("")->empty());
  EXPECT_FALSE(parseGeometry("1g.5gb").ok());
  EXPECT_FALSE(parseGeometry("1g.5gb:0").ok());
  EXPECT_FALSE(parseGeometry("1g.5gb:x").ok());
  EXPECT_EQ(instanceCount(g), 4);
}

TEST(MigGeometryTest, FilterRestrictsProfiles) {
  const GpuModel& a100 = *findModelByName("A100-40GB");
  for (const auto& g : enumerateGeometries(a100, ProfileFilter{{"1g.5gb", "3g.20gb"}, false})) {
    for (const auto& [name, count] : g) EXPECT_TRUE(name == "1g.5gb" || name == "3g.20gb") << name;
  }
  for (const auto& g : enumerateGeometries(a100, ProfileFilter{{}, true})) {
    EXPECT_EQ(g.count("1g.5gb+me"), 0u);
  }
}

}  // namespace mig_geometry_test
}  // namespace gpuscale::partition
