#include "gpuscale/partition/mig_restore.h"

#include <gtest/gtest.h>

namespace gpuscale::partition {
namespace mig_restore_test {

TEST(MigRestoreTest, DecodesOnlyCompleteRecords) {
  struct Row {
    const char* annotation;
    std::optional<MigRestore> expected;
  };
  const Row rows[] = {
      {R"({"before":"all-3g.20gb","applied":"gpuscale-n-1_2"})",
       MigRestore{"all-3g.20gb", "gpuscale-n-1_2"}},
      {"", std::nullopt},
      {"not json", std::nullopt},
      {R"({"before":"all-3g.20gb"})", std::nullopt},
      {R"({"before":"","applied":"x"})", std::nullopt},
      {R"({"before":3,"applied":"x"})", std::nullopt},
      {R"(["all-3g.20gb"])", std::nullopt},
  };
  for (const auto& r : rows) EXPECT_EQ(decodeMigRestore(r.annotation), r.expected) << r.annotation;
  const MigRestore m{"a", "b"};
  EXPECT_EQ(decodeMigRestore(encodeMigRestore(m)), m);
}

TEST(MigRestoreTest, BeforeSurvivesGpuscalesOwnSuccessiveReshapes) {
  struct Row {
    const char* what;
    std::optional<MigRestore> current;
    const char* previous;
    const char* applied;
    std::optional<MigRestore> expected;
  };
  const Row rows[] = {
      {"first reshape", std::nullopt, "all-3g.20gb", "g1", MigRestore{"all-3g.20gb", "g1"}},
      {"a second reshape from gpuscale's own config keeps before", MigRestore{"all-3g.20gb", "g1"},
       "g1", "g2", MigRestore{"all-3g.20gb", "g2"}},
      {"after an operator's relabel the new baseline counts", MigRestore{"all-3g.20gb", "g1"},
       "all-balanced", "g3", MigRestore{"all-balanced", "g3"}},
      {"no label before: nothing to give back", std::nullopt, "", "g1", std::nullopt},
  };
  for (const auto& r : rows)
    EXPECT_EQ(nextMigRestore(r.current, r.previous, r.applied), r.expected) << r.what;
}

}  // namespace mig_restore_test
}  // namespace gpuscale::partition
