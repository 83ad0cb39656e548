#include "gpuscale/core/duration.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace gpuscale::core {
namespace duration_test {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;

struct ParseCase {
  const char* what;
  std::string_view text;
  std::optional<int64_t> nanos;  // nullopt: an error whose message contains `error`
  std::string_view error = {};
};

void PrintTo(const ParseCase& c, std::ostream* os) { *os << c.what; }

void expectParse(const ParseCase& c, const Result<Duration>& got) {
  if (c.nanos) {
    ASSERT_TRUE(got.ok()) << c.what << ": " << got.status().toString();
    EXPECT_EQ(got->count(), *c.nanos) << c.what;
  } else {
    ASSERT_FALSE(got.ok()) << c.what << ": parsed as " << got->count();
    EXPECT_EQ(got.status().httpCode(), 400) << c.what;
    EXPECT_NE(got.status().message().find(c.error), std::string::npos)
        << c.what << ": " << got.status().message();
  }
}

// Expected values are what Go's time.ParseDuration returns.
const ParseCase kGoCases[] = {
    {"bare zero", "0", 0},
    {"signed zeros", "+0", 0},
    {"negative zero", "-0", 0},
    {"seconds", "1s", kSecond},
    {"fractional hours", "1.5h", 90 * kMinute},
    {"negative", "-1h", -kHour},
    {"compound", "1h30m", 90 * kMinute},
    {"milliseconds", "300ms", 300'000'000},
    {"us", "1us", 1'000},
    {"micro sign", "1\xC2\xB5s", 1'000},
    {"greek mu", "1\xCE\xBCs", 1'000},
    {"leading dot", ".5s", 500'000'000},
    {"trailing dot", "5.s", 5 * kSecond},
    {"fraction below a nanosecond is dropped", "1.0000000001s", kSecond},
    {"fraction is truncated", "1.9999999999ns", 1},
    {"very long fraction keeps what fits", "1.00000000000000000000000000001h", kHour},
    {"0.3h as Go computes it", "0.3h", 1'080'000'000'000},
    {"largest", "9223372036854775807ns", std::numeric_limits<int64_t>::max()},
    {"smallest", "-9223372036854775808ns", std::numeric_limits<int64_t>::min()},
    {"largest whole hours", "2562047h", 2562047 * kHour},
    {"empty", "", std::nullopt, "time: invalid duration \"\""},
    {"number without unit", "1", std::nullopt, "time: missing unit in duration \"1\""},
    {"unit without number", "s", std::nullopt, "invalid duration"},
    {"dot without digits", ".s", std::nullopt, "invalid duration"},
    {"unknown unit", "1x", std::nullopt, "time: unknown unit \"x\" in duration \"1x\""},
    {"trailing number", "1s2", std::nullopt, "missing unit"},
    {"sign only", "-", std::nullopt, "invalid duration"},
    {"exponent is not a unit", "1e3s", std::nullopt, "unknown unit \"e\""},
    {"leading space", " 1s", std::nullopt, "invalid duration"},
    {"two dots", "1..5s", std::nullopt, "missing unit"},
    {"overflow by one", "9223372036854775808ns", std::nullopt, "invalid duration"},
    {"overflow in hours", "2562048h", std::nullopt, "invalid duration"},
    {"overflow in digits", "100000000000000000000ns", std::nullopt, "invalid duration"},
    {"overflow in the sum", "2562047h1h", std::nullopt, "invalid duration"},
    {"message quotes control characters", "1\n", std::nullopt, R"(unknown unit "\n")"},
};

class GoDurationTest : public testing::TestWithParam<ParseCase> {};

TEST_P(GoDurationTest, ParsesAsGoTimeParseDuration) {
  expectParse(GetParam(), parseGoDuration(GetParam().text));
}

INSTANTIATE_TEST_SUITE_P(Table, GoDurationTest, testing::ValuesIn(kGoCases));

// Expected values are what Prometheus' model.ParseDuration returns.
const ParseCase kPrometheusCases[] = {
    {"bare zero", "0", 0},
    {"minutes", "5m", 5 * kMinute},
    {"milliseconds", "250ms", 250'000'000},
    {"day", "1d", kDay},
    {"week", "2w", 14 * kDay},
    {"year is 365 days", "1y", 365 * kDay},
    {"compound", "1h30m", 90 * kMinute},
    {"every unit in order", "1y1w1d1h1m1s1ms",
     365 * kDay + 7 * kDay + kDay + kHour + kMinute + kSecond + 1'000'000},
    {"zero with unit", "0s", 0},
    {"empty", "", std::nullopt, "empty duration string"},
    {"fraction", "1.5h", std::nullopt, "unknown unit \".\" in duration \"1.5h\""},
    {"sign", "-1h", std::nullopt, "not a valid duration string"},
    {"units out of order", "30m1h", std::nullopt, "not a valid duration string"},
    {"repeated unit", "1h1h", std::nullopt, "not a valid duration string"},
    {"missing unit", "10", std::nullopt, "not a valid duration string"},
    {"unknown unit", "1us", std::nullopt, "unknown unit \"us\" in duration \"1us\""},
    {"out of range", "293y", std::nullopt, "duration out of range"},
    {"digits overflow uint64", "99999999999999999999s", std::nullopt,
     "not a valid duration string"},
};

class PrometheusDurationTest : public testing::TestWithParam<ParseCase> {};

TEST_P(PrometheusDurationTest, ParsesAsPrometheusModelDuration) {
  expectParse(GetParam(), parsePrometheusDuration(GetParam().text));
}

INSTANTIATE_TEST_SUITE_P(Table, PrometheusDurationTest, testing::ValuesIn(kPrometheusCases));

struct FormatCase {
  const char* what;
  int64_t nanos;
  std::string_view expected;
};

// Expected values are what Go's Duration.String() prints.
const FormatCase kFormatCases[] = {
    {"zero", 0, "0s"},
    {"one nanosecond", 1, "1ns"},
    {"below a microsecond", 999, "999ns"},
    {"microsecond uses the micro sign", 1'000, "1\xC2\xB5s"},
    {"fractional microseconds", 1'500, "1.5\xC2\xB5s"},
    {"millisecond", 1'000'000, "1ms"},
    {"fractional milliseconds", 1'234'567, "1.234567ms"},
    {"second", kSecond, "1s"},
    {"fractional seconds", 1'500'000'000, "1.5s"},
    {"minutes and seconds", 90 * kSecond, "1m30s"},
    {"an hour prints every unit", kHour, "1h0m0s"},
    {"hours minutes seconds", 3723 * kSecond, "1h2m3s"},
    {"negative", -kMinute, "-1m0s"},
    {"negative nanosecond", -1, "-1ns"},
    {"nanosecond after hours", 100 * kHour + 1, "100h0m0.000000001s"},
    {"largest", std::numeric_limits<int64_t>::max(), "2562047h47m16.854775807s"},
    {"smallest", std::numeric_limits<int64_t>::min(), "-2562047h47m16.854775808s"},
};

void PrintTo(const FormatCase& c, std::ostream* os) { *os << c.what; }

class FormatGoDurationTest : public testing::TestWithParam<FormatCase> {};

TEST_P(FormatGoDurationTest, PrintsAsGoDurationString) {
  EXPECT_EQ(formatGoDuration(Duration{GetParam().nanos}), GetParam().expected) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(Table, FormatGoDurationTest, testing::ValuesIn(kFormatCases));

TEST(GoDurationRoundTrip, FormatThenParseGivesTheSameDuration) {
  for (int64_t nanos : {int64_t{0}, int64_t{1}, int64_t{1'500}, 90 * kSecond, -kHour - 1,
                        std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    const Result<Duration> parsed = parseGoDuration(formatGoDuration(Duration{nanos}));
    ASSERT_TRUE(parsed.ok()) << nanos << ": " << parsed.status().toString();
    EXPECT_EQ(parsed->count(), nanos);
  }
}

}  // namespace duration_test
}  // namespace gpuscale::core
