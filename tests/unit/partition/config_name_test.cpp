#include "gpuscale/partition/config_name.h"

#include <gtest/gtest.h>

#include <set>

#include "gpuscale/core/label_selector.h"

namespace gpuscale::partition {
namespace config_name_test {

// Node names that share long prefixes, as cloud providers generate them.
const std::string kStem = "gke-inference-prod-europe-west4-a100-pool-";  // 42 characters
const std::string kLongA = kStem + "7f3c9a2e-1x2b";                      // 55
const std::string kLongB = kStem + "7f3c9a2e-9q8r";                      // same 50-char prefix

TEST(ConfigNameTest, NamesAreValidLabelValuesForAnyNodeNameLength) {
  for (std::size_t n = 1; n <= 253; ++n) {
    const std::string node(n, 'n');
    const std::string name = ownedConfigName(node, "version: v1\n");
    SCOPED_TRACE(name);
    EXPECT_LE(name.size(), kMaxConfigNameChars);
    EXPECT_TRUE(core::isValidLabelValue(name)) << core::labelValueError(name);
    EXPECT_TRUE(isOwnedConfigOf(name, node));
  }
}

TEST(ConfigNameTest, NodesSharingAPrefixGetDistinctNames) {
  struct Row {
    const char* what;
    std::string a, b;
  };
  const std::vector<Row> rows{
      {"same first 45 characters (the old cut)", kLongA, kLongB},
      {"same first 36 characters", kStem + "x", kStem + "y"},
      {"one name is a prefix of the other", "node-1", "node-10"},
      {"differ only past character 200", std::string(200, 'a') + "-1",
       std::string(200, 'a') + "-2"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    const std::string content = "version: v1\nsharing: {}\n";
    const std::string a = ownedConfigName(row.a, content);
    const std::string b = ownedConfigName(row.b, content);
    EXPECT_NE(a, b);
    EXPECT_TRUE(isOwnedConfigOf(a, row.a));
    EXPECT_TRUE(isOwnedConfigOf(b, row.b));
    EXPECT_FALSE(isOwnedConfigOf(a, row.b)) << a << " claimed by " << row.b;
    EXPECT_FALSE(isOwnedConfigOf(b, row.a)) << b << " claimed by " << row.a;
  }
}

TEST(ConfigNameTest, SameNodeAndContentGiveTheSameNameDifferentContentAnother) {
  EXPECT_EQ(ownedConfigName(kLongA, "x"), ownedConfigName(kLongA, "x"));
  EXPECT_NE(ownedConfigName(kLongA, "x"), ownedConfigName(kLongA, "y"));
  EXPECT_EQ(stableHash(""), 2166136261u);  // FNV-1a offset basis: stable across builds
}

TEST(ConfigNameTest, OwnershipIsExact) {
  const std::string mine = ownedConfigName("node-1", "c");
  const std::string theirs = ownedConfigName(kLongA, "c");
  struct Row {
    const char* what;
    std::string name;
    std::string node;
    bool owned;
  };
  const std::vector<Row> rows{
      {"its own name", mine, "node-1", true},
      {"another node's name", ownedConfigName("node-2", "c"), "node-1", false},
      {"a name of a node whose name extends this one", ownedConfigName("node-10", "c"), "node-1",
       false},
      {"not gpuscale's", "all-balanced", "node-1", false},
      {"the node part without a content hash", theirs.substr(0, theirs.size() - 9), kLongA, false},
      {"a content hash in capitals", mine.substr(0, mine.size() - 8) + "ABCDEF01", "node-1", false},
      {"a content hash one digit short", mine.substr(0, mine.size() - 1), "node-1", false},
      {"a name from before the node hash, short node", "gpuscale-node-1-0badf00d", "node-1", true},
      {"an older name of a node whose name extends this one", "gpuscale-node-10-0badf00d", "node-1",
       false},
      {"an older name of another node ending like a hash", "gpuscale-node-1-0badf00d-0badf00d",
       "node-1", false},
      {"an older, cut name of a long node: ambiguous, left alone",
       "gpuscale-" + kLongA.substr(0, 45) + "-0badf00d", kLongA, false},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    EXPECT_EQ(isOwnedConfigOf(row.name, row.node), row.owned) << row.name;
  }
}

}  // namespace config_name_test
}  // namespace gpuscale::partition
