#include "gpuscale/core/go_quote.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace gpuscale::core {
namespace go_quote_test {

struct QuoteCase {
  const char* what;
  std::string input;
  std::string expected;
};

// Expected values are what Go's strconv.Quote prints for the same bytes.
const QuoteCase kQuoteCases[] = {
    {"empty string", "", R"("")"},
    {"plain name", "web-1", R"("web-1")"},
    {"double quote is escaped", "a\"b", R"("a\"b")"},
    {"backslash is escaped", "a\\b", R"("a\\b")"},
    {"short escapes", "\a\b\f\n\r\t\v", R"("\a\b\f\n\r\t\v")"},
    {"other controls and DEL as \\x", std::string("\x00\x01\x1f\x7f", 4), R"("\x00\x01\x1f\x7f")"},
    {"printable non-ASCII kept raw", "\xC3\xA9\xE6\x97\xA5\xE6\x9C\xAC",
     "\"\xC3\xA9\xE6\x97\xA5\xE6\x9C\xAC\""},
    {"emoji kept raw", "\xF0\x9F\x98\x80", "\"\xF0\x9F\x98\x80\""},
    {"U+FFFD encoded properly is printable", "\xEF\xBF\xBD", "\"\xEF\xBF\xBD\""},
    {"invalid byte", "\xff", R"("\xff")"},
    {"truncated sequence", "\xc3", R"("\xc3")"},
    {"truncated sequence before ASCII",
     "\xc3"
     "a",
     R"("\xc3a")"},
    {"surrogate bytes are invalid one by one", "\xed\xa0\x80", R"("\xed\xa0\x80")"},
    {"overlong encoding is invalid", "\xe0\x80\xaf", R"("\xe0\x80\xaf")"},
    {"above U+10FFFF is invalid", "\xf4\x90\x80\x80", R"("\xf4\x90\x80\x80")"},
    {"no-break space is not printable", "\xC2\xA0", R"("\u00a0")"},
    {"soft hyphen (format) is not printable", "\xC2\xAD", R"("\u00ad")"},
    {"zero-width space", "\xE2\x80\x8B", R"("\u200b")"},
    {"line separator", "\xE2\x80\xA8", R"("\u2028")"},
    {"byte-order mark", "\xEF\xBB\xBF", R"("\ufeff")"},
    {"private use", "\xEE\x80\x80", R"("\ue000")"},
    {"astral format character", "\xF3\xA0\x80\x81", R"("\U000e0001")"},
    {"last code point (unassigned)", "\xF4\x8F\xBF\xBF", R"("\U0010ffff")"},
    {"musical format control", "\xF0\x9D\x85\xB3", R"("\U0001d173")"},
    {"PromQL injection attempt stays inside the string", "x\"}or vector(1)#",
     R"("x\"}or vector(1)#")"},
};

void PrintTo(const QuoteCase& c, std::ostream* os) { *os << c.what; }

class GoQuoteTest : public testing::TestWithParam<QuoteCase> {};

TEST_P(GoQuoteTest, MatchesGoStrconvQuote) {
  EXPECT_EQ(goQuote(GetParam().input), GetParam().expected) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(Table, GoQuoteTest, testing::ValuesIn(kQuoteCases));

struct QuoteMetaCase {
  const char* what;
  std::string_view input;
  std::string_view expected;
};

const QuoteMetaCase kQuoteMetaCases[] = {
    {"empty", "", ""},
    {"plain name", "web-1", "web-1"},
    {"every metacharacter", R"(\.+*?()|[]{}^$)", R"(\\\.\+\*\?\(\)\|\[\]\{\}\^\$)"},
    {"mixed text, non-ASCII untouched", "a.b|c\xC3\xA9", "a\\.b\\|c\xC3\xA9"},
    {"dash, slash and colon are not special", "a-b/c:d", "a-b/c:d"},
};

void PrintTo(const QuoteMetaCase& c, std::ostream* os) { *os << c.what; }

class RegexQuoteMetaTest : public testing::TestWithParam<QuoteMetaCase> {};

TEST_P(RegexQuoteMetaTest, MatchesGoRegexpQuoteMeta) {
  EXPECT_EQ(regexQuoteMeta(GetParam().input), GetParam().expected) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(Table, RegexQuoteMetaTest, testing::ValuesIn(kQuoteMetaCases));

}  // namespace go_quote_test
TEST(IsValidUtf8Test, MatchesGoUtf8ValidString) {
  struct Row {
    const char* what;
    std::string text;
    bool valid;
  };
  const Row rows[] = {
      {"empty", "", true},
      {"ASCII with controls", std::string("a\0\x7f", 3), true},
      {"two, three and four bytes", "\u00fc\u540d\U0001F680", true},
      {"lone continuation byte", "a\x80", false},
      {"cut inside a sequence", "pod\xc3", false},
      {"overlong slash", "\xc0\xaf", false},
      {"surrogate", "\xed\xa0\x80", false},
      {"above U+10FFFF", "\xf4\x90\x80\x80", false},
      {"0xff",
       "a\xff"
       "b",
       false},
  };
  for (const Row& row : rows) EXPECT_EQ(isValidUtf8(row.text), row.valid) << row.what;
}

}  // namespace gpuscale::core
