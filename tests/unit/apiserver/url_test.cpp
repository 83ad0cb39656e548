#include "gpuscale/apiserver/url.h"

#include <gtest/gtest.h>

namespace gpuscale::apiserver {
namespace url_test {

TEST(DecodePath, DecodesEscapesButNotPlus) {
  EXPECT_EQ(*decodePath("/pods/%2A/m"), "/pods/*/m");
  EXPECT_EQ(*decodePath("/pods/%2a/m"), "/pods/*/m");
  EXPECT_EQ(*decodePath("/a+b"), "/a+b");
}

TEST(DecodePath, RejectsMalformedEscapes) {
  for (const char* bad : {"/%", "/%2", "/%zz", "/a%G1"}) {
    const auto decoded = decodePath(bad);
    ASSERT_FALSE(decoded.ok()) << bad;
    EXPECT_EQ(decoded.status().httpCode(), 400) << bad;
  }
}

struct QueryRow {
  const char* what;
  const char* raw;
  const char* key;
  std::optional<std::string> value;
};

class QueryTest : public ::testing::TestWithParam<QueryRow> {};

TEST_P(QueryTest, FirstValue) {
  const auto& row = GetParam();
  EXPECT_EQ(QueryParams::parse(row.raw).get(row.key), row.value) << row.what;
}

INSTANTIATE_TEST_SUITE_P(
    Table, QueryTest,
    ::testing::Values(QueryRow{"plain pair", "a=b", "a", "b"},
                      QueryRow{"form decoding", "labelSelector=app%3Dweb%2Ctier+in+%28x%29",
                               "labelSelector", "app=web,tier in (x)"},
                      QueryRow{"first of repeated keys", "a=1&a=2", "a", "1"},
                      QueryRow{"key without value is empty", "verbose", "verbose", ""},
                      QueryRow{"missing key", "a=1", "b", std::nullopt},
                      QueryRow{"pair with semicolon is dropped", "a=1;b=2&c=3", "a", std::nullopt},
                      QueryRow{"bad escape drops only that pair", "a=%zz&b=2", "b", "2"},
                      QueryRow{"empty pairs skipped", "&&a=1&", "a", "1"}));

}  // namespace url_test
}  // namespace gpuscale::apiserver
