#include "gpuscale/core/enum_names.h"

#include <gtest/gtest.h>

namespace gpuscale::core {
namespace enum_names_test {

enum class Color { kRed, kGreen, kBlue };

constexpr EnumNames<Color, 2> kColors{{{Color::kRed, "red"}, {Color::kGreen, "green"}}};

TEST(EnumNamesTest, BothWays) {
  struct Row {
    const char* what;
    std::string_view text;
    std::optional<Color> parsed;
  };
  for (const Row& row : std::vector<Row>{
           {"a name", "red", Color::kRed},
           {"another", "green", Color::kGreen},
           {"case matters", "Red", std::nullopt},
           {"no prefix match", "re", std::nullopt},
           {"empty", "", std::nullopt},
       }) {
    EXPECT_EQ(enumValue(kColors, row.text), row.parsed) << row.what;
    if (row.parsed) {
      EXPECT_EQ(enumName(kColors, *row.parsed, "?"), row.text) << row.what;
    }
  }
  EXPECT_EQ(enumName(kColors, Color::kBlue, "none"), "none") << "not in the table";
  static_assert(enumName(kColors, Color::kGreen, "") == "green");
  static_assert(enumValue(kColors, "red") == Color::kRed);
}

}  // namespace enum_names_test
}  // namespace gpuscale::core
