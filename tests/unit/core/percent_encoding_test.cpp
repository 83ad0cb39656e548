#include "gpuscale/core/percent_encoding.h"

#include <gtest/gtest.h>

namespace gpuscale::core {
namespace percent_encoding_test {

TEST(PercentDecode, Table) {
  struct Case {
    std::string_view text;
    bool plusIsSpace;
    std::optional<std::string> decoded;
  };
  const Case cases[] = {
      {"", false, ""},
      {"/pods/%2A/m", false, "/pods/*/m"},
      {"a+b", false, "a+b"},
      {"a+b", true, "a b"},
      {"%7b%7D", true, "{}"},
      {"%e2%82%ac", false, "\xe2\x82\xac"},
      {"%00", false, std::string(1, '\0')},
      {"%", false, std::nullopt},
      {"%2", false, std::nullopt},
      {"%zz", true, std::nullopt},
      {"ok%2", true, std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(percentDecode(c.text, c.plusIsSpace), c.decoded) << c.text;
  }
}

TEST(HexDigitValue, AllDigitsAndOthers) {
  EXPECT_EQ(hexDigitValue('0'), 0);
  EXPECT_EQ(hexDigitValue('9'), 9);
  EXPECT_EQ(hexDigitValue('a'), 10);
  EXPECT_EQ(hexDigitValue('F'), 15);
  EXPECT_EQ(hexDigitValue('g'), -1);
  EXPECT_EQ(hexDigitValue('%'), -1);
}

TEST(HexLower, Bytes) {
  EXPECT_EQ(hexLower(""), "");
  EXPECT_EQ(hexLower(std::string("\x00\x0f\xf0\xff", 4)), "000ff0ff");
  EXPECT_EQ(hexLower("AZ"), "415a");
}

}  // namespace percent_encoding_test
}  // namespace gpuscale::core
