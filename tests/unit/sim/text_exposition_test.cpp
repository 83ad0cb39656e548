#include "gpuscale/sim/text_exposition.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscale::sim {
namespace text_exposition_test {

TEST(TextExpositionTest, EscapingAndGoStyleValues) {
  EXPECT_EQ(formatLabelSet({{"a", "x\"y\\z\nw"}, {"b", ""}}), R"({a="x\"y\\z\nw",b=""})");
  EXPECT_EQ(formatSampleValue(NAN), "NaN");
  EXPECT_EQ(formatSampleValue(INFINITY), "+Inf");
  EXPECT_EQ(formatSampleValue(-INFINITY), "-Inf");
  EXPECT_EQ(formatSampleValue(0.1), "0.1");
  EXPECT_EQ(formatSampleValue(3), "3");
  EXPECT_EQ(formatSampleValue(1e21), "1e+21");
}

// What Python's prometheus_client prints (floatToGoString over Python's repr).
TEST(TextExpositionTest, PythonStyleValues) {
  struct Row {
    double value;
    const char* want;
  };
  const std::vector<Row> rows = {
      {0, "0.0"},
      {3, "3.0"},
      {-2, "-2.0"},
      {0.25, "0.25"},
      {0.001, "0.001"},
      {0.0001, "0.0001"},
      {0.00001, "1e-05"},
      {1.0 / 3, "0.3333333333333333"},
      {2560, "2560.0"},
      {123456, "123456.0"},
      {1234567, "1.234567e+06"},
      {1000000, "1e+06"},
      {12345678.5, "1.23456785e+07"},
      {1e10, "1e+010"},
      {1e15, "1e+015"},
      {1e16, "1e+16"},
      {-1234567, "-1234567.0"},
      {NAN, "NaN"},
      {INFINITY, "+Inf"},
      {-INFINITY, "-Inf"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(formatPythonSampleValue(row.value), row.want) << row.value;
  }
}

constexpr double kBounds[] = {0.5, 1.0, 2.5};

TEST(TextExpositionTest, HistogramBucketsAreCumulativeAndInclusive) {
  struct Row {
    const char* what;
    std::vector<std::pair<double, double>> observations;  // value, weight
    std::vector<double> wantCumulative;                   // per bound, then +Inf
    double wantSum, wantCount;
  };
  const std::vector<Row> rows = {
      {"empty", {}, {0, 0, 0, 0}, 0, 0},
      {"a value on a bound counts in that bucket (le)", {{1.0, 1}}, {0, 1, 1, 1}, 1, 1},
      {"above every bound: only +Inf", {{9, 1}}, {0, 0, 0, 1}, 9, 1},
      {"weights", {{0.25, 3}, {2, 2}}, {3, 3, 5, 5}, 4.75, 5},
  };
  for (const Row& row : rows) {
    Histogram h(kBounds);
    for (auto [value, weight] : row.observations) h.observe(value, weight);
    for (std::size_t i = 0; i < row.wantCumulative.size(); ++i) {
      EXPECT_EQ(h.cumulative(i), row.wantCumulative[i]) << row.what << " bucket " << i;
    }
    EXPECT_EQ(h.sum(), row.wantSum) << row.what;
    EXPECT_EQ(h.count(), row.wantCount) << row.what;
  }
}

TEST(TextExpositionTest, HistogramSamplesInClientOrder) {
  Histogram h(kBounds);
  h.observe(0.75, 2);
  EXPECT_EQ(formatHistogramSamples("x_seconds", {{"pod", "p"}}, h, formatPythonSampleValue),
            "x_seconds_bucket{pod=\"p\",le=\"0.5\"} 0.0\n"
            "x_seconds_bucket{pod=\"p\",le=\"1.0\"} 2.0\n"
            "x_seconds_bucket{pod=\"p\",le=\"2.5\"} 2.0\n"
            "x_seconds_bucket{pod=\"p\",le=\"+Inf\"} 2.0\n"
            "x_seconds_count{pod=\"p\"} 2.0\n"
            "x_seconds_sum{pod=\"p\"} 1.5\n");
}

TEST(TextExpositionTest, FamilyPerValueStartsMissingValuesAtZero) {
  struct Item {
    std::string name;
    std::map<std::string, double> counts;
  };
  const std::vector<Item> items = {{"a", {{"x", 2}}}, {"b", {}}};
  constexpr std::string_view kValues[] = {"x", "y"};
  EXPECT_EQ(formatFamilyPerValue(
                "c_total", "counter", "Help.", items,
                [](const Item& i) {
                  return ExpositionLabels{{"pod", i.name}};
                },
                "why", kValues, [](const Item& i) -> const auto& { return i.counts; }),
            "# HELP c_total Help.\n# TYPE c_total counter\n"
            "c_total{pod=\"a\",why=\"x\"} 2\nc_total{pod=\"a\",why=\"y\"} 0\n"
            "c_total{pod=\"b\",why=\"x\"} 0\nc_total{pod=\"b\",why=\"y\"} 0\n");
}

}  // namespace text_exposition_test
}  // namespace gpuscale::sim
