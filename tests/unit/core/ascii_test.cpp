#include "gpuscale/core/ascii.h"

#include <gtest/gtest.h>

#include <string_view>

namespace gpuscale::core {
namespace ascii_test {

constexpr std::string_view kDigits = "0123456789";
constexpr std::string_view kLower = "abcdefghijklmnopqrstuvwxyz";
constexpr std::string_view kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

// Every char value, the negative ones (bytes of UTF-8 text) included, against the classes spelled
// out: no locale, no other byte in any class.
TEST(AsciiTest, ClassesHoldExactlyTheirCharacters) {
  for (int value = -128; value < 128; ++value) {
    const char c = static_cast<char>(value);
    const bool digit = kDigits.find(c) != std::string_view::npos;
    const bool lower = kLower.find(c) != std::string_view::npos;
    const bool upper = kUpper.find(c) != std::string_view::npos;
    EXPECT_EQ(isAsciiDigit(c), digit) << value;
    EXPECT_EQ(isAsciiLower(c), lower) << value;
    EXPECT_EQ(isAsciiUpper(c), upper) << value;
    EXPECT_EQ(isAsciiAlpha(c), lower || upper) << value;
    EXPECT_EQ(isAsciiAlnum(c), digit || lower || upper) << value;
  }
}

}  // namespace ascii_test
}  // namespace gpuscale::core
