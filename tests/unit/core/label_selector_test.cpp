#include "gpuscale/core/label_selector.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

namespace gpuscale::core {
namespace label_selector_test {

struct ParseCase {
  const char* what;
  std::string_view text;
  std::string_view canonical;  // toString() of the parsed selector
};

void PrintTo(const ParseCase& c, std::ostream* os) { *os << c.what; }

// Canonical strings are what apimachinery's labels.Parse(text).String() returns.
const ParseCase kParseCases[] = {
    {"empty selector", "", ""},
    {"only whitespace", " \t\r\n", ""},
    {"exists", "a", "a"},
    {"does not exist", "!a", "!a"},
    {"equals", "a=b", "a=b"},
    {"double equals is kept", "a==b", "a==b"},
    {"not equals", "a!=b", "a!=b"},
    {"in", "a in (x,y)", "a in (x,y)"},
    {"notin values sorted and deduplicated", "a notin (y,x,x)", "a notin (x,y)"},
    {"greater than", "a>1", "a>1"},
    {"less than", "a<10", "a<10"},
    {"leading zeros in an integer", "a>01", "a>01"},
    {"prefixed key", "example.com/a=b", "example.com/a=b"},
    {"empty value set is the empty value", "a in ()", "a in ()"},
    {"lone comma is the empty value", "a in (,)", "a in ()"},
    {"trailing comma adds the empty value", "a in (b,)", "a in (,b)"},
    {"double comma adds the empty value", "a in (,,b)", "a in (,b)"},
    {"empty value after =", "a=", "a="},
    {"empty value after ==", "a==", "a=="},
    {"empty value before a comma", "a=,b", "a=,b"},
    {"requirements sorted by key", "b,a,!c", "a,b,!c"},
    {"sorted by key, values sorted", "z=1,a=2,m in (q,b)", "a=2,m in (b,q),z=1"},
    {"same key keeps its order", "a!=2,a=1", "a!=2,a=1"},
    {"whitespace around tokens", " a = b , c ", "a=b,c"},
    {"tabs and newlines", "a\tin\n(b\r)", "a in (b)"},
    {"no whitespace around in needs none elsewhere", "a in(b)", "a in (b)"},
    {"a key named in", "in in (in)", "in in (in)"},
    {"a key named notin", "notin", "notin"},
    {"exists then in", "a in (b),c", "a in (b),c"},
    {"key of 63 characters", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
    {"value with dots, dashes, underscores", "a=x.y-z_1", "a=x.y-z_1"},
};

class LabelSelectorParseTest : public testing::TestWithParam<ParseCase> {};

TEST_P(LabelSelectorParseTest, ParsesAsLabelsParse) {
  const Result<LabelSelector> s = LabelSelector::parse(GetParam().text);
  ASSERT_TRUE(s.ok()) << s.status().toString();
  EXPECT_EQ(s->toString(), GetParam().canonical);
  EXPECT_EQ(s->empty(), GetParam().canonical.empty());
}

TEST_P(LabelSelectorParseTest, CanonicalStringRoundTrips) {
  const Result<LabelSelector> s = LabelSelector::parse(GetParam().text);
  ASSERT_TRUE(s.ok()) << s.status().toString();
  const Result<LabelSelector> again = LabelSelector::parse(s->toString());
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ(again->toString(), s->toString());
}

INSTANTIATE_TEST_SUITE_P(Table, LabelSelectorParseTest, testing::ValuesIn(kParseCases));

TEST(LabelSelectorParseTest, RequirementsCarryOperatorsAndSortedValues) {
  const Result<LabelSelector> s =
      LabelSelector::parse("z notin (b,a),y==1,x!=2,w in (c),!v,u,t>3,s<4,r=5");
  ASSERT_TRUE(s.ok()) << s.status().toString();
  const auto& r = s->requirements();
  ASSERT_EQ(r.size(), 9u);
  const SelectorOperator expected[] = {
      SelectorOperator::kEquals,    SelectorOperator::kLessThan,     SelectorOperator::kGreaterThan,
      SelectorOperator::kExists,    SelectorOperator::kDoesNotExist, SelectorOperator::kIn,
      SelectorOperator::kNotEquals, SelectorOperator::kDoubleEquals, SelectorOperator::kNotIn,
  };
  for (size_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i].op, expected[i]) << r[i].key;
  EXPECT_EQ(r[8].values, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r[3].values.empty());
}

struct BadCase {
  const char* what;
  std::string_view text;
  std::string_view message;  // exactly apimachinery's error text
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.what; }

#define VALUE_RULE                                                                            \
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or " \
  "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "          \
  "'my_value',  or '12345', regex used for validation is "                                    \
  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define NAME_RULE                                                                             \
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " \
  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "      \
  "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define PREFIX_RULE                                                                      \
  "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "  \
  "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. " \
  "'example.com', regex used for validation is "                                         \
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define REQ "unable to parse requirement: "

const BadCase kBadCases[] = {
    {"negative integer is not a label value", "a<-1",
     REQ "values[0][a]: Invalid value: \"-1\": " VALUE_RULE},
    {"k>non-integer", "a>b",
     REQ "values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer"},
    {"k>decimal", "a>1.5",
     REQ "values[0]: Invalid value: \"1.5\": for 'Gt', 'Lt' operators, the value must be an "
         "integer"},
    {"k> with nothing", "a>",
     REQ "values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the value must be an integer"},
    {"k>-b fails both checks", "a>-b",
     REQ "[values[0]: Invalid value: \"-b\": for 'Gt', 'Lt' operators, the value must be an "
         "integer, values[0][a]: Invalid value: \"-b\": " VALUE_RULE "]"},
    {"two words", "a b", REQ "found 'b', expected: in, notin, =, ==, !=, gt, lt"},
    {"value then word", "a=b c", "found 'c', expected: ',' or 'end of string'"},
    {"upper-case prefix", "A_b/x=y", REQ "<nil>: Invalid value: \"A_b/x\": " PREFIX_RULE},
    {"key starting with a dash", "-a", REQ "<nil>: Invalid value: \"-a\": name part " NAME_RULE},
    {"two slashes", "a/b/c",
     REQ "<nil>: Invalid value: \"a/b/c\": a qualified name " NAME_RULE
         " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
    {"empty prefix", "/a", REQ "<nil>: Invalid value: \"/a\": prefix part must be non-empty"},
    {"empty name", "a/",
     REQ "<nil>: Invalid value: \"a/\": name part must be non-empty; name part " NAME_RULE},
    {"key of 64 characters", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     REQ
     "<nil>: Invalid value: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": "
     "name part must be no more than 63 characters"},
    {"value of 64 characters", "a=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
     REQ "values[0][a]: Invalid value: "
         "\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\": must be no more "
         "than 63 characters"},
    {"value starting with a dash", "a=-b", REQ "values[0][a]: Invalid value: \"-b\": " VALUE_RULE},
    {"PromQL injection in a value", "x=\"}",
     REQ "values[0][x]: Invalid value: \"\\\"}\": " VALUE_RULE},
    {"control character in a key is quoted", "a\x01",
     REQ "<nil>: Invalid value: \"a\\x01\": name part " NAME_RULE},
    {"NUL byte is not the end of input", std::string_view("\0a", 2),
     REQ "<nil>: Invalid value: \"\\x00a\": name part " NAME_RULE},
    {"empty requirement between commas", "a,,b", "found ',', expected: identifier after ','"},
    {"trailing comma", "a=b,", "found '', expected: identifier after ','"},
    {"leading comma", ",a", "found ',', expected: !, identifier, or 'end of string'"},
    {"leading parenthesis", "(a", "found '(', expected: !, identifier, or 'end of string'"},
    {"bang without key", "!", REQ "found '', expected: identifier"},
    {"bang then operator", "!a=b", "found '=', expected: ',' or 'end of string'"},
    {"bang after key", "a!", REQ "found '!', expected: in, notin, =, ==, !=, gt, lt"},
    {"closing parenthesis after key", "a)",
     REQ "found ')', expected: in, notin, =, ==, !=, gt, lt"},
    {"parenthesised exact value", "a=(b)", REQ "found '(', expected: identifier"},
    {"chained equals", "a=b=c", "found '=', expected: ',' or 'end of string'"},
    {"notin without set", "a notin", REQ "found '' expected: '('"},
    {"in without parentheses", "a in b", REQ "found 'b' expected: '('"},
    {"unclosed set", "a in (b", REQ "found '', expected: ',' or ')'"},
    {"open set", "a in (", REQ "found '', expected: ',', ')' or identifier"},
    {"space inside set", "a in (b c)", REQ "found 'c', expected: ',' or ')'"},
    {"less-or-equal is not an operator", "a<=1", REQ "found '=', expected: identifier"},
    {"bang value", "a=!b", REQ "found '!', expected: identifier"},
    {"not-double-equals", "a!==b", REQ "found '=', expected: identifier"},
    {"invalid value inside a set", "a in (-x,y)",
     REQ "values[0][a]: Invalid value: \"-x\": " VALUE_RULE},
};

class LabelSelectorBadTest : public testing::TestWithParam<BadCase> {};

TEST_P(LabelSelectorBadTest, IsABadRequestWithApimachinerysMessage) {
  const Result<LabelSelector> s = LabelSelector::parse(GetParam().text);
  ASSERT_FALSE(s.ok()) << "parsed as " << s->toString();
  EXPECT_EQ(s.status().httpCode(), 400);
  EXPECT_EQ(s.status().reason(), "BadRequest");
  EXPECT_EQ(s.status().message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(Table, LabelSelectorBadTest, testing::ValuesIn(kBadCases));

struct MatchCase {
  const char* what;
  std::string_view selector;
  Labels labels;
  bool matches;
};

void PrintTo(const MatchCase& c, std::ostream* os) { *os << c.what; }

const MatchCase kMatchCases[] = {
    {"empty selector matches no labels", "", {}, true},
    {"empty selector matches anything", "", {{"a", "1"}}, true},
    {"equals, same value", "a=x", {{"a", "x"}}, true},
    {"equals, other value", "a=x", {{"a", "y"}}, false},
    {"equals, missing key", "a=x", {}, false},
    {"double equals", "a==x", {{"a", "x"}}, true},
    {"empty value matches the empty label", "a=", {{"a", ""}}, true},
    {"empty value does not match a missing key", "a=", {}, false},
    {"not equals, other value", "a!=x", {{"a", "y"}}, true},
    {"not equals, same value", "a!=x", {{"a", "x"}}, false},
    {"not equals, missing key matches", "a!=x", {}, true},
    {"in, listed value", "a in (x,y)", {{"a", "y"}}, true},
    {"in, unlisted value", "a in (x,y)", {{"a", "z"}}, false},
    {"in, missing key does not match", "a in (x,y)", {}, false},
    {"in () matches the empty value", "a in ()", {{"a", ""}}, true},
    {"notin, listed value", "a notin (x,y)", {{"a", "x"}}, false},
    {"notin, unlisted value", "a notin (x,y)", {{"a", "z"}}, true},
    {"notin, missing key matches", "a notin (x,y)", {}, true},
    {"exists, present", "a", {{"a", ""}}, true},
    {"exists, missing", "a", {{"b", "x"}}, false},
    {"does not exist, missing", "!a", {{"b", "x"}}, true},
    {"does not exist, present", "!a", {{"a", "x"}}, false},
    {"greater than, larger", "a>5", {{"a", "6"}}, true},
    {"greater than, equal", "a>5", {{"a", "5"}}, false},
    {"greater than, negative label value", "a>5", {{"a", "-6"}}, false},
    {"greater than, plus sign parses", "a>5", {{"a", "+6"}}, true},
    {"greater than, leading zeros", "a>05", {{"a", "10"}}, true},
    {"greater than, non-integer label", "a>5", {{"a", "six"}}, false},
    {"greater than, label beyond int64", "a>5", {{"a", "99999999999999999999"}}, false},
    {"greater than, missing key", "a>5", {}, false},
    {"less than, smaller", "a<5", {{"a", "-100"}}, true},
    {"less than, larger", "a<5", {{"a", "7"}}, false},
    {"all requirements must match", "a=x,b", {{"a", "x"}}, false},
    {"all requirements match", "a=x,b,!c,d notin (1)", {{"a", "x"}, {"b", ""}}, true},
    {"keys are case sensitive", "a=x", {{"A", "x"}}, false},
    {"prefixed key", "example.com/a in (x)", {{"example.com/a", "x"}}, true},
};

class LabelSelectorMatchTest : public testing::TestWithParam<MatchCase> {};

TEST_P(LabelSelectorMatchTest, MatchesAsApimachinery) {
  const Result<LabelSelector> s = LabelSelector::parse(GetParam().selector);
  ASSERT_TRUE(s.ok()) << s.status().toString();
  EXPECT_EQ(s->matches(GetParam().labels), GetParam().matches);
}

INSTANTIATE_TEST_SUITE_P(Table, LabelSelectorMatchTest, testing::ValuesIn(kMatchCases));

TEST(LabelSelectorTest, DefaultSelectorMatchesEverything) {
  const LabelSelector everything;
  EXPECT_TRUE(everything.empty());
  EXPECT_EQ(everything.toString(), "");
  EXPECT_TRUE(everything.matches({{"a", "b"}}));
}

TEST(RequirementTest, HandBuiltValuesPrintSortedAndMatchUnsorted) {
  const Requirement r{"a", SelectorOperator::kIn, {"y", "x"}};
  EXPECT_EQ(r.toString(), "a in (x,y)");
  EXPECT_TRUE(r.matches({{"a", "y"}}));
}

struct ValidationCase {
  const char* what;
  std::string_view text;
  bool validKey;
  bool validValue;
};

void PrintTo(const ValidationCase& c, std::ostream* os) { *os << c.what; }

const ValidationCase kValidationCases[] = {
    {"empty", "", false, true},
    {"simple", "app", true, true},
    {"single character", "a", true, true},
    {"digits", "123", true, true},
    {"inner punctuation", "a-b_c.d", true, true},
    {"trailing dash", "a-", false, false},
    {"leading underscore", "_a", false, false},
    {"prefixed", "k8s.io/app", true, false},
    {"prefix with upper case", "K8s.io/app", false, false},
    {"prefix label starting with a dash", "-k8s.io/app", false, false},
    {"empty prefix label", "k8s..io/app", false, false},
    {"63 characters",
     std::string_view("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), true,
     true},
    {"64 characters",
     std::string_view("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), false,
     false},
    {"space", "a b", false, false},
    {"non-ASCII", "caf\xC3\xA9", false, false},
    {"quote", "a\"", false, false},
};

class LabelValidationTest : public testing::TestWithParam<ValidationCase> {};

TEST_P(LabelValidationTest, ValidatesAsApimachinery) {
  EXPECT_EQ(isValidLabelKey(GetParam().text), GetParam().validKey)
      << labelKeyError(GetParam().text);
  EXPECT_EQ(isValidLabelValue(GetParam().text), GetParam().validValue)
      << labelValueError(GetParam().text);
}

INSTANTIATE_TEST_SUITE_P(Table, LabelValidationTest, testing::ValuesIn(kValidationCases));

TEST(LabelValidationTest, LongPrefixReportsLengthAndShape) {
  const std::string prefix(254, 'a');
  EXPECT_EQ(labelKeyError(prefix + "/x"), "prefix part must be no more than 253 characters");
  EXPECT_EQ(labelValueError(std::string(64, '-')),
            "must be no more than 63 characters; " VALUE_RULE);
}

#undef REQ
#undef PREFIX_RULE
#undef NAME_RULE
#undef VALUE_RULE

TEST(Dns1123Label, AsKubernetesNamesNamespaces) {
  for (const char* good : {"a", "default", "kube-system", "a1", "1a"}) {
    EXPECT_TRUE(isDns1123Label(good)) << good;
  }
  for (const char* bad : {"", "-a", "a-", "A", "a.b", "a/b", "..", "a_b"}) {
    EXPECT_FALSE(isDns1123Label(bad)) << bad;
  }
  EXPECT_TRUE(isDns1123Label(std::string(63, 'a')));
  EXPECT_FALSE(isDns1123Label(std::string(64, 'a')));
}

}  // namespace label_selector_test
}  // namespace gpuscale::core
