#include "gpuscale/rules/config.h"

#include <gtest/gtest.h>

namespace gpuscale::rules {
namespace config_test {

struct Row {
  const char* what;
  Diagnostic diagnostic;
  const char* expected;
};

const Row kRows[] = {
    {"position and path", {{3, 7}, "rules[0].name", "bad"}, "f.yaml:3:7: rules[0].name: bad"},
    {"no path", {{1, 1}, "", "empty"}, "f.yaml:1:1: empty"},
    {"no position", {{}, "rules[1]", "oops"}, "f.yaml: rules[1]: oops"},
};

TEST(Diagnostic, Format) {
  for (const Row& row : kRows) {
    SCOPED_TRACE(row.what);
    EXPECT_EQ(row.diagnostic.format("f.yaml"), row.expected);
  }
}

}  // namespace config_test
}  // namespace gpuscale::rules
