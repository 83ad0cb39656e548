#include "gpuscale/core/quantity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

namespace gpuscale::core {
namespace quantity_test {

using Format = Quantity::Format;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct MetricValueCase {
  const char* what;
  double value;
  std::string_view expected;
  bool saturated = false;
};

void PrintTo(const MetricValueCase& c, std::ostream* os) { *os << c.what; }

// Every row of the reference table (apimachinery's NewMilliQuantity(int64(v*1000),
// DecimalSI).String()), plus our saturation contract where Go amd64 wraps to
// "-9223372036854775808m".
const MetricValueCase kMetricValueCases[] = {
    {"zero", 0, "0"},
    {"negative zero", -0.0, "0"},
    {"one", 1, "1"},
    {"half", 0.5, "500m"},
    {"tenth", 0.1, "100m"},
    {"0.12", 0.12, "120m"},
    {"one milli", 0.001, "1m"},
    {"below a milli truncates to zero", 0.0004, "0"},
    {"just below a milli truncates to zero", 0.0009999, "0"},
    {"negative below a milli truncates to zero", -0.0004, "0"},
    {"1.5", 1.5, "1500m"},
    {"pi is truncated, not rounded", 3.14159, "3141m"},
    {"4.275", 4.275, "4275m"},
    {"1.005 is 1004.9999999999999 milli in double", 1.005, "1004m"},
    {"12.34", 12.34, "12340m"},
    {"123.456789", 123.456789, "123456m"},
    {"399.3 from the user's story", 399.3, "399300m"},
    {"ten", 10, "10"},
    {"hundred", 100, "100"},
    {"thousand is 1k", 1000, "1k"},
    {"1500 stays plain", 1500, "1500"},
    {"1234567", 1234567, "1234567"},
    {"million", 1e6, "1M"},
    {"2.5e6 is 2500k", 2.5e6, "2500k"},
    {"giga", 1e9, "1G"},
    {"tera", 1e12, "1T"},
    {"peta", 1e15, "1P"},
    {"largest row that fits", 9.2e15, "9200T"},
    {"minus one", -1, "-1"},
    {"minus a quarter", -0.25, "-250m"},
    {"minus thousand", -1000, "-1k"},
    {"minus 1500", -1500, "-1500"},
    {"9.3e15 saturates", 9.3e15, "9223372036854775807m", true},
    {"1e16 saturates", 1e16, "9223372036854775807m", true},
    {"1e20 saturates", 1e20, "9223372036854775807m", true},
    {"+Inf saturates", kInf, "9223372036854775807m", true},
    {"-1e20 saturates", -1e20, "-9223372036854775808m", true},
    {"-Inf saturates", -kInf, "-9223372036854775808m", true},
    {"largest double", std::numeric_limits<double>::max(), "9223372036854775807m", true},
};

class MetricValueTest : public testing::TestWithParam<MetricValueCase> {};

TEST_P(MetricValueTest, FormatsAsPrometheusAdapter) {
  const MetricValueCase& c = GetParam();
  const Result<Quantity> q = Quantity::fromMetricValue(c.value);
  ASSERT_TRUE(q.ok()) << q.status().toString();
  EXPECT_EQ(q->toString(), c.expected);
  EXPECT_EQ(q->saturated(), c.saturated);
  EXPECT_EQ(q->format(), Format::kDecimalSI);
  EXPECT_EQ(formatMilliDecimalSI(q->milliValue()), c.expected);
}

INSTANTIATE_TEST_SUITE_P(Table, MetricValueTest, testing::ValuesIn(kMetricValueCases));

TEST(MetricValueTest, NaNIsAnInvalidValueError) {
  const Result<Quantity> q = Quantity::fromMetricValue(std::nan(""));
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().httpCode(), 422);
  EXPECT_EQ(q.status().message(), "value is NaN");
}

struct FormatCase {
  const char* what;
  Quantity quantity;
  std::string_view expected;
};

void PrintTo(const FormatCase& c, std::ostream* os) { *os << c.what; }

const FormatCase kFormatCases[] = {
    {"default is zero", Quantity(), "0"},
    {"milli extremes", Quantity::fromMilli(kMin), "-9223372036854775808m"},
    {"int extremes", Quantity::fromInt(kMax), "9223372036854775807"},
    {"whole thousands", Quantity::fromInt(-7000), "-7k"},
    {"milli ten thousand", Quantity::fromMilli(10'500), "10500m"},
    // BinarySI.
    {"binary 1024", Quantity::fromInt(1024, Format::kBinarySI), "1Ki"},
    {"binary 1536 is not a whole Ki", Quantity::fromInt(1536, Format::kBinarySI), "1536"},
    {"binary 1048576", Quantity::fromInt(1048576, Format::kBinarySI), "1Mi"},
    {"binary 268435456", Quantity::fromInt(268435456, Format::kBinarySI), "256Mi"},
    {"binary 1073741824", Quantity::fromInt(1073741824, Format::kBinarySI), "1Gi"},
    {"binary 1e9", Quantity::fromInt(1'000'000'000, Format::kBinarySI), "1000000000"},
    {"binary 123456789", Quantity::fromInt(123456789, Format::kBinarySI), "123456789"},
    {"binary below 1024 is plain", Quantity::fromInt(512, Format::kBinarySI), "512"},
    {"binary fraction uses DecimalSI", Quantity::fromMilli(1500, Format::kBinarySI), "1500m"},
    {"binary 1023.5", Quantity::fromMilli(1'023'500, Format::kBinarySI), "1023500m"},
    {"binary negative", Quantity::fromInt(-1024, Format::kBinarySI), "-1Ki"},
    {"binary whole milli value", Quantity::fromMilli(2'048'000, Format::kBinarySI), "2Ki"},
    {"binary zero", Quantity::fromInt(0, Format::kBinarySI), "0"},
    {"exponent format", Quantity::fromInt(1000, Format::kDecimalExponent), "1e3"},
    {"exponent format milli", Quantity::fromMilli(1, Format::kDecimalExponent), "1e-3"},
    {"exponent format plain", Quantity::fromInt(1500, Format::kDecimalExponent), "1500"},
};

class QuantityFormatTest : public testing::TestWithParam<FormatCase> {};

TEST_P(QuantityFormatTest, PrintsCanonicalForm) {
  EXPECT_EQ(GetParam().quantity.toString(), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Table, QuantityFormatTest, testing::ValuesIn(kFormatCases));

struct ParseCase {
  const char* what;
  std::string_view text;
  std::string_view canonical;
  Format format;
  int64_t value;
  int64_t milli;
};

void PrintTo(const ParseCase& c, std::ostream* os) { *os << c.what; }

// Canonical strings, formats, Value() and MilliValue() as apimachinery returns them, except where a
// row says otherwise (apimachinery overflows where we saturate, and echoes some inputs verbatim).
const ParseCase kParseCases[] = {
    {"plain integer", "7", "7", Format::kDecimalSI, 7, 7000},
    {"binary gibibytes", "40Gi", "40Gi", Format::kBinarySI, 42949672960, 42949672960000},
    {"decimal fraction", "1.5", "1500m", Format::kDecimalSI, 2, 1500},
    {"milli", "500m", "500m", Format::kDecimalSI, 1, 500},
    {"exponent", "2e3", "2e3", Format::kDecimalExponent, 2000, 2'000'000},
    {"capital E alone is exa", "1E", "1E", Format::kDecimalSI, 1'000'000'000'000'000'000, kMax},
    {"negative kilo", "-1k", "-1k", Format::kDecimalSI, -1000, -1'000'000},
    {"leading dot", ".5", "500m", Format::kDecimalSI, 1, 500},
    {"trailing dot", "1.", "1", Format::kDecimalSI, 1, 1000},
    {"plus sign (apimachinery echoes \"+1\")", "+1", "1", Format::kDecimalSI, 1, 1000},
    {"zero", "0", "0", Format::kDecimalSI, 0, 0},
    {"leading zeros", "007", "7", Format::kDecimalSI, 7, 7000},
    {"double zero", "00", "0", Format::kDecimalSI, 0, 0},
    {"negative zero", "-0", "0", Format::kDecimalSI, 0, 0},
    {"negative exponent", "1e-3", "1e-3", Format::kDecimalExponent, 1, 1},
    {"plus exponent (apimachinery echoes)", "1e+3", "1e3", Format::kDecimalExponent, 1000,
     1'000'000},
    {"capital exponent (apimachinery echoes)", "1E3", "1e3", Format::kDecimalExponent, 1000,
     1'000'000},
    {"exponent keeps non-multiple digits", "15e3", "15e3", Format::kDecimalExponent, 15000,
     15'000'000},
    {"fractional exponent mantissa", "1.5e3", "1500", Format::kDecimalExponent, 1500, 1'500'000},
    {"exponent floors to a multiple of 3", "1e19", "10e18", Format::kDecimalExponent, kMax, kMax},
    {"huge exponent", "1e100", "10e99", Format::kDecimalExponent, kMax, kMax},
    {"DecimalSI beyond E uses an exponent", "1000E", "1e21", Format::kDecimalSI, kMax, kMax},
    {"23 digits with trailing zeros", "100000000000000000000000", "100e21", Format::kDecimalSI,
     kMax, kMax},
    {"tiny exponent rounds up to nano", "1e-100", "1e-9", Format::kDecimalExponent, 1, 1},
    {"12e-10 rounds up to 2e-9", "12e-10", "2e-9", Format::kDecimalExponent, 1, 1},
    {"micro exponent", "3e-5", "30e-6", Format::kDecimalExponent, 1, 1},
    {"binary fraction to Mi", "1.5Gi", "1536Mi", Format::kBinarySI, 1610612736, 1610612736000},
    {"binary carries up", "1024Mi", "1Gi", Format::kBinarySI, 1073741824, 1073741824000},
    {"binary odd Ki", "1023Ki", "1023Ki", Format::kBinarySI, 1047552, 1047552000},
    {"binary half Ki", "0.5Ki", "512", Format::kBinarySI, 512, 512000},
    {"binary 1.5Ki", "1.5Ki", "1536", Format::kBinarySI, 1536, 1536000},
    {"binary non-integer", "0.1Ki", "102400m", Format::kBinarySI, 103, 102400},
    {"binary non-integer Mi", "1.1Mi", "1153433600m", Format::kBinarySI, 1153434, 1153433600},
    {"binary rounds to nano", "1.0000000001Ki", "1024000000103n", Format::kBinarySI, 1025, 1024001},
    {"binary below one is DecimalSI", "0.0001Ki", "102400u", Format::kDecimalSI, 1, 103},
    {"binary negative", "-1Ki", "-1Ki", Format::kBinarySI, -1024, -1024000},
    {"binary negative fraction", "-1.5Gi", "-1536Mi", Format::kBinarySI, -1610612736,
     -1610612736000},
    {"binary capped at 2^63-1", "8Ei", "9223372036854775807", Format::kBinarySI, kMax, kMax},
    {"binary negative capped", "-8Ei", "-9223372036854775807", Format::kBinarySI, -kMax, kMin},
    {"exbibyte", "1Ei", "1Ei", Format::kBinarySI, 1152921504606846976, kMax},
    {"below nano rounds up", "0.9n", "1n", Format::kDecimalSI, 1, 1},
    {"half nano rounds up", "0.5n", "1n", Format::kDecimalSI, 1, 1},
    {"negative rounds away from zero (apimachinery's Value() says 1)", "-0.5n", "-1n",
     Format::kDecimalSI, -1, -1},
    {"ten fraction digits", "1.0000000001", "1000000001n", Format::kDecimalSI, 2, 1001},
    {"four fraction digits", "1.2345", "1234500u", Format::kDecimalSI, 2, 1235},
    {"many digits round to nano", "1.23456789012345678901234", "1234567891n", Format::kDecimalSI, 2,
     1235},
    {"tiny negative", "-0.000000000001", "-1n", Format::kDecimalSI, -1, -1},
    {"micro", "100u", "100u", Format::kDecimalSI, 1, 1},
    {"milli to units", "1000m", "1", Format::kDecimalSI, 1, 1000},
    {"micro to units", "1000000u", "1", Format::kDecimalSI, 1, 1000},
    {"decimal milli", "0.001", "1m", Format::kDecimalSI, 1, 1},
    {"2500k", "2500k", "2500k", Format::kDecimalSI, 2'500'000, 2'500'000'000},
    {"peta", "1P", "1P", Format::kDecimalSI, 1'000'000'000'000'000, 1'000'000'000'000'000'000},
    {"int64 max", "9223372036854775807", "9223372036854775807", Format::kDecimalSI, kMax, kMax},
    {"int64 min", "-9223372036854775808", "-9223372036854775808", Format::kDecimalSI, kMin, kMin},
    {"negative fraction", "-1.5", "-1500m", Format::kDecimalSI, -2, -1500},
};

class QuantityParseTest : public testing::TestWithParam<ParseCase> {};

TEST_P(QuantityParseTest, ParsesLikeApimachinery) {
  const ParseCase& c = GetParam();
  const Result<Quantity> q = Quantity::parse(c.text);
  ASSERT_TRUE(q.ok()) << q.status().toString();
  EXPECT_EQ(q->toString(), c.canonical);
  EXPECT_EQ(q->format(), c.format);
  EXPECT_EQ(q->value(), c.value);
  EXPECT_EQ(q->milliValue(), c.milli);
  EXPECT_FALSE(q->saturated());
}

TEST_P(QuantityParseTest, CanonicalStringRoundTrips) {
  const Result<Quantity> q = Quantity::parse(GetParam().text);
  ASSERT_TRUE(q.ok()) << q.status().toString();
  const Result<Quantity> again = Quantity::parse(q->toString());
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ(*again, *q);
  EXPECT_EQ(again->toString(), q->toString());
}

INSTANTIATE_TEST_SUITE_P(Table, QuantityParseTest, testing::ValuesIn(kParseCases));

// A whole binary value that no binary suffix divides prints without one, as apimachinery's
// CanonicalizeBytes prints it; that text then reads back as decimal, so the canonical string
// settles one print later ("448k"), with the value unchanged.
TEST(QuantityTest, ABinaryValueNoSuffixDividesSettlesAsDecimal) {
  const Result<Quantity> q = Quantity::parse("437.5Ki");
  ASSERT_TRUE(q.ok()) << q.status().toString();
  EXPECT_EQ(q->toString(), "448000");
  EXPECT_EQ(q->format(), Format::kBinarySI);
  const Result<Quantity> again = Quantity::parse(q->toString());
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ(*again, *q);
  EXPECT_EQ(again->toString(), "448k");
  EXPECT_EQ(Quantity::parse("448k")->toString(), "448k");
}

struct BadParseCase {
  const char* what;
  std::string_view text;
  std::string_view why;
};

void PrintTo(const BadParseCase& c, std::ostream* os) { *os << c.what; }

const BadParseCase kBadParseCases[] = {
    {"empty", "", "must match the regular expression"},
    {"two dots", "1.2.3", "must match the regular expression"},
    {"unknown binary prefix", "1Zi", "must match the regular expression"},
    {"suffix without number", "k", "no digits"},
    {"sign without number", "-", "no digits"},
    {"dot without digits", ".", "no digits"},
    {"exponent without digits", "1e", "suffix"},
    {"capital K is not kilo", "1K", "suffix"},
    {"lower-case ki", "1ki", "suffix"},
    {"double E", "1EE", "suffix"},
    {"digits after a binary suffix", "1Mi3", "suffix"},
    {"fractional exponent", "1e1.5", "must match the regular expression"},
    {"leading space", " 1", "must match the regular expression"},
    {"trailing space", "1 ", "must match the regular expression"},
    {"exponent and binary suffix", "1e3Ki", "must match the regular expression"},
    {"i alone", "1.1i", "suffix"},
    {"exponent sign without digits", "1e+", "suffix"},
    {"20 significant digits", "99999999999999999999", "int64"},
    {"2^64", "18446744073709551616", "int64"},
    {"one below int64 min", "-9223372036854775809", "int64"},
    {"exponent beyond int32 (apimachinery wraps it)", "1e4294967296", "suffix"},
    {"exponent beyond the limit", "1e1000000001", "suffix"},
    {"huge mantissa times exponent stays out of range", "1000e999999999", "exponent out of range"},
};

class QuantityBadParseTest : public testing::TestWithParam<BadParseCase> {};

TEST_P(QuantityBadParseTest, IsABadRequestNamingTheText) {
  const BadParseCase& c = GetParam();
  const Result<Quantity> q = Quantity::parse(c.text);
  ASSERT_FALSE(q.ok()) << "parsed as " << q->toString();
  EXPECT_EQ(q.status().httpCode(), 400);
  EXPECT_NE(q.status().message().find("\"" + std::string(c.text) + "\""), std::string::npos)
      << q.status().message();
  EXPECT_NE(q.status().message().find(c.why), std::string::npos) << q.status().message();
}

INSTANTIATE_TEST_SUITE_P(Table, QuantityBadParseTest, testing::ValuesIn(kBadParseCases));

struct CompareCase {
  const char* what;
  std::string_view a;
  std::string_view b;
  int expected;
};

void PrintTo(const CompareCase& c, std::ostream* os) { *os << c.what; }

const CompareCase kCompareCases[] = {
    {"same value, different suffix", "1k", "1000", 0},
    {"same value, different format", "1Ki", "1024", 0},
    {"binary above decimal", "1Ki", "1k", 1},
    {"negative below zero", "-1", "0", -1},
    {"nano below micro", "1n", "1u", -1},
    {"more digits, smaller unit", "999999m", "1k", -1},
    {"huge exponent above int64", "1e21", "9223372036854775807", 1},
    {"negative ordering flips", "-2", "-1", -1},
    {"prefix digits", "12", "123e-1", -1},
    {"zero equals negative zero", "0", "-0", 0},
    {"milli equals fraction", "500m", "0.5", 0},
};

class QuantityCompareTest : public testing::TestWithParam<CompareCase> {};

TEST_P(QuantityCompareTest, ComparesValues) {
  const CompareCase& c = GetParam();
  const Result<Quantity> a = Quantity::parse(c.a);
  const Result<Quantity> b = Quantity::parse(c.b);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->compare(*b), c.expected);
  EXPECT_EQ(b->compare(*a), -c.expected);
  EXPECT_EQ(*a == *b, c.expected == 0);
  EXPECT_EQ(*a < *b, c.expected < 0);
}

INSTANTIATE_TEST_SUITE_P(Table, QuantityCompareTest, testing::ValuesIn(kCompareCases));

TEST(QuantityCompareTest, MetricValueEqualsParsedMilli) {
  EXPECT_EQ(*Quantity::fromMetricValue(0.5), *Quantity::parse("500m"));
  EXPECT_EQ(Quantity::fromMilli(1000), Quantity::fromInt(1));
  EXPECT_LT(Quantity::fromMilli(kMin), Quantity::fromMilli(kMax));
}

struct RoundingCase {
  const char* what;
  Quantity quantity;
  int64_t value;
  int64_t milli;
};

void PrintTo(const RoundingCase& c, std::ostream* os) { *os << c.what; }

const RoundingCase kRoundingCases[] = {
    {"whole milli value is exact", Quantity::fromMilli(401'000), 401, 401'000},
    {"fraction rounds up", Quantity::fromMilli(1'500), 2, 1'500},
    {"negative fraction rounds away from zero", Quantity::fromMilli(-1'500), -2, -1'500},
    {"below one rounds up to one", Quantity::fromMilli(1), 1, 1},
    {"zero", Quantity::fromMilli(0), 0, 0},
    {"units to milli", Quantity::fromInt(5), 5, 5'000},
    {"milli saturates", Quantity::fromInt(kMax), kMax, kMax},
    {"negative milli saturates", Quantity::fromInt(kMin), kMin, kMin},
    {"largest milli", Quantity::fromMilli(kMax), 9'223'372'036'854'776, kMax},
    {"smallest milli", Quantity::fromMilli(kMin), -9'223'372'036'854'776, kMin},
};

class QuantityRoundingTest : public testing::TestWithParam<RoundingCase> {};

TEST_P(QuantityRoundingTest, RoundsAwayFromZeroAndSaturates) {
  EXPECT_EQ(GetParam().quantity.value(), GetParam().value);
  EXPECT_EQ(GetParam().quantity.milliValue(), GetParam().milli);
}

INSTANTIATE_TEST_SUITE_P(Table, QuantityRoundingTest, testing::ValuesIn(kRoundingCases));

struct DoubleCase {
  const char* what;
  std::string_view text;
  double expected;
};

void PrintTo(const DoubleCase& c, std::ostream* os) { *os << c.what; }

const DoubleCase kDoubleCases[] = {
    {"fraction", "1.5", 1.5},
    {"milli", "1m", 0.001},
    {"negative nano", "-1n", -1e-9},
    {"binary", "40Gi", 42949672960.0},
    {"large exponent", "1e100", 1e100},
    {"beyond double range", "1e1000000", kInf},
    {"negative beyond double range", "-1e1000000", -kInf},
    {"zero", "0", 0.0},
};

class QuantityDoubleTest : public testing::TestWithParam<DoubleCase> {};

TEST_P(QuantityDoubleTest, ConvertsToDouble) {
  const Result<Quantity> q = Quantity::parse(GetParam().text);
  ASSERT_TRUE(q.ok()) << q.status().toString();
  EXPECT_EQ(q->toDouble(), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Table, QuantityDoubleTest, testing::ValuesIn(kDoubleCases));

TEST(QuantityRoundTrip, MetricValuesReparseToTheSameQuantity) {
  for (const MetricValueCase& c : kMetricValueCases) {
    const Quantity q = *Quantity::fromMetricValue(c.value);
    const Result<Quantity> parsed = Quantity::parse(q.toString());
    ASSERT_TRUE(parsed.ok()) << c.what << ": " << parsed.status().toString();
    EXPECT_EQ(*parsed, q) << c.what;
    EXPECT_EQ(parsed->toString(), q.toString()) << c.what;
  }
}

}  // namespace quantity_test
}  // namespace gpuscale::core
