#include "quantity.h"

#include <gtest/gtest.h>

namespace gpuscale::partition {
namespace quantity_test {

TEST(QuantityTest, ParsesKubernetesQuantities) {
  struct Case {
    const char* text;
    std::optional<double> value;
  } cases[] = {
      {"7", 7},
      {"399300m", 399.3},
      {"1.5", 1.5},
      {"40Gi", 40.0 * 1073741824.0},
      {"2k", 2000},
      {"+3", 3},
      {"-1", -1},
      {"", std::nullopt},
      {"Gi", std::nullopt},
      {"1e3", 1000},
      {"7 ", std::nullopt},
      {"seven", std::nullopt},
  };
  for (const auto& c : cases) {
    auto got = parseQuantity(c.text);
    ASSERT_EQ(got.has_value(), c.value.has_value()) << c.text;
    if (got) {
      EXPECT_DOUBLE_EQ(*got, *c.value) << c.text;
    }
  }
}

TEST(QuantityTest, ParsesGoDurations) {
  using std::chrono::milliseconds;
  EXPECT_EQ(parseDuration("90s"), milliseconds(90000));
  EXPECT_EQ(parseDuration("1h30m"), milliseconds(5400000));
  EXPECT_EQ(parseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(parseDuration("0"), milliseconds(0));
  EXPECT_FALSE(parseDuration("10").has_value());
  EXPECT_FALSE(parseDuration("1d").has_value());
  EXPECT_FALSE(parseDuration("").has_value());
}

}  // namespace quantity_test
}  // namespace gpuscale::partition
