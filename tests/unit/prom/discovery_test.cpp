#include "gpuscale/prom/discovery.h"

#include <gtest/gtest.h>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::prom {
namespace {

using Names = std::vector<std::string>;

TEST(DiscoveryTest, RestrictToMetric) {
  struct Row {
    const char* what;
    const char* query;
    const char* name;
    const char* want;  // null: an error
  } rows[] = {
      {"braces only", R"({namespace!="",pod!=""})", "m", R"({__name__="m",namespace!="",pod!=""})"},
      {"regex on the name stays", R"({__name__=~"^container_.*",pod!=""})", "container_cpu",
       R"({__name__="container_cpu",__name__=~"^container_.*",pod!=""})"},
      {"empty braces", "{}", "m", R"({__name__="m"})"},
      {"named selector is unchanged", R"(m{pod!=""})", "m", R"(m{pod!=""})"},
      {"bare name is unchanged", " m ", "m", "m"},
      {"another metric's selector", R"(x{pod!=""})", "m", nullptr},
      {"unclosed braces", R"({pod!="")", "m", nullptr},
  };
  for (const auto& row : rows) {
    auto got = restrictToMetric(row.query, row.name);
    if (row.want == nullptr) {
      EXPECT_FALSE(got.ok()) << row.what;
    } else {
      ASSERT_TRUE(got.ok()) << row.what << ": " << got.status().toString();
      EXPECT_EQ(*got, row.want) << row.what;
    }
  }
}

TEST(DiscoveryTest, AddMatcher) {
  struct Row {
    const char* what;
    const char* query;
    const char* want;  // null: an error
  } rows[] = {
      {"into braces", R"({namespace!=""})", R"({pod!="",namespace!=""})"},
      {"into named braces", R"(m{a="b"})", R"(m{pod!="",a="b"})"},
      {"bare name gets braces", "m", R"(m{pod!=""})"},
      {"empty braces", "{}", R"({pod!=""})"},
      {"empty query", "  ", nullptr},
  };
  for (const auto& row : rows) {
    auto got = addMatcher(row.query, R"(pod!="")");
    if (row.want == nullptr) {
      EXPECT_FALSE(got.ok()) << row.what;
    } else {
      ASSERT_TRUE(got.ok()) << row.what << ": " << got.status().toString();
      EXPECT_EQ(*got, row.want) << row.what;
    }
  }
}

TEST(DiscoveryTest, RequiresLabel) {
  struct Row {
    const char* query;
    const char* label;
    bool want;
  } rows[] = {
      {R"({namespace!="",pod!=""})", "pod", true},
      {R"({namespace!="",pod!=""})", "namespace", true},
      {R"(m{pod="a,b",namespace="x"})", "namespace", true},
      {R"({pod=""})", "pod", false},
      {R"({pod=~".+"})", "pod", false},
      {R"({podx!=""})", "pod", false},
      {R"({a="pod!="""})", "pod", false},
      {"m", "pod", false},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(requiresLabel(row.query, row.label), row.want) << row.query << " " << row.label;
  }
}

TEST(DiscoveryTest, LabelsTheQueryRequiresCostNoCall) {
  fakes::FakePrometheusClient fake;
  const std::string query = R"({namespace!="",pod!=""})";
  fake.setLabelValues("__name__", {query}, Names{"a", "b"});
  DiscoveryReport report;
  auto got = discoverLabelPresence(fake, query, {"namespace", "pod"}, {}, &report);
  ASSERT_TRUE(got.ok());
  MetricLabelNames want = {{"a", {"namespace", "pod"}}, {"b", {"namespace", "pod"}}};
  EXPECT_EQ(*got, want);
  EXPECT_EQ(fake.totalCalls(), 1u);
}

TEST(DiscoveryTest, LabelPresenceCostsOneCallPerLabel) {
  fakes::FakePrometheusClient fake;
  const std::string query = R"({__name__=~"nv_.*"})";
  fake.setLabelValues("__name__", {query}, Names{"a", "b", "c"});
  fake.setLabelValues("__name__", {R"({namespace!="",__name__=~"nv_.*"})"}, Names{"a", "b"});
  fake.setLabelValues("__name__", {R"({pod!="",__name__=~"nv_.*"})"}, Names{"a", "x"});
  DiscoveryReport report;
  auto got = discoverLabelPresence(fake, query, {"namespace", "pod"}, {}, &report);
  ASSERT_TRUE(got.ok()) << got.status().toString();
  MetricLabelNames want = {{"a", {"namespace", "pod"}}, {"b", {"namespace"}}, {"c", {}}};
  EXPECT_EQ(*got, want) << "metrics outside the base query are ignored";
  EXPECT_EQ(report.calls, 3u);
  EXPECT_EQ(fake.totalCalls(), 3u);

  fake.setLabelValues("__name__", {R"({pod!="",__name__=~"nv_.*"})"},
                      failure(FailureKind::kTimeout, "slow"));
  EXPECT_EQ(failureKindOf(discoverLabelPresence(fake, query, {"namespace", "pod"}, {}).status()),
            FailureKind::kTimeout)
      << "any failed call fails the discovery";
}

TEST(DiscoveryTest, LabelNamesOfSeriesDropNameAndDeduplicate) {
  std::vector<Series> series = {
      {{"__name__", "a"}, {"pod", "p1"}, {"namespace", "n"}},
      {{"__name__", "a"}, {"pod", "p2"}, {"container", "c"}},
      {{"__name__", "b"}},
      {{"job", "no name"}},
  };
  MetricLabelNames want = {{"a", {"container", "namespace", "pod"}}, {"b", {}}};
  EXPECT_EQ(labelNamesOf(series), want);
}

TEST(DiscoveryTest, UsesLabelApisAndAgreesWithTheSeriesView) {
  fakes::FakePrometheusClient fake;
  const std::string query = R"({namespace!="",pod!=""})";
  fake.setLabelValues("__name__", {query}, Names{"a", "b"});
  fake.setLabelNames({query}, Names{"__name__", "container", "namespace", "pod", "zone"});
  fake.setLabelNames({R"({__name__="a",namespace!="",pod!=""})"},
                     Names{"__name__", "namespace", "pod"});
  fake.setLabelNames({R"({__name__="b",namespace!="",pod!=""})"},
                     Names{"__name__", "container", "namespace", "pod"});
  fake.setSeries({query},
                 std::vector<Series>{
                     {{"__name__", "a"}, {"namespace", "n"}, {"pod", "p"}},
                     {{"__name__", "b"}, {"namespace", "n"}, {"pod", "p"}, {"container", "c"}},
                 });
  DiscoveryReport report;
  auto cheap = discoverLabelNames(fake, query, {}, {}, &report);
  ASSERT_TRUE(cheap.ok()) << cheap.status().toString();
  EXPECT_FALSE(report.usedSeriesFallback);
  EXPECT_EQ(report.calls, 4u) << "names, union, one per metric (2 metrics < 2 labels to probe)";
  EXPECT_EQ(fake.calls("labels:" + query), 1u);
  EXPECT_EQ(fake.calls("series:" + query), 0u) << "no /api/v1/series call";
  auto full = discoverLabelNamesFromSeries(fake, query, {});
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(*cheap, *full);
}

TEST(DiscoveryTest, ProbesLabelsWhenThereAreFewerLabelsThanMetrics) {
  fakes::FakePrometheusClient fake;
  const std::string query = R"({pod!=""})";
  fake.setLabelValues("__name__", {query}, Names{"a", "b", "c", "d"});
  fake.setLabelNames({query}, Names{"__name__", "container", "pod"});
  fake.setLabelValues("__name__", {R"({container!="",pod!=""})"}, Names{"b", "d"});
  fake.setSeries({query}, std::vector<Series>{
                              {{"__name__", "a"}, {"pod", "p"}},
                              {{"__name__", "b"}, {"pod", "p"}, {"container", "c"}},
                              {{"__name__", "c"}, {"pod", "p"}},
                              {{"__name__", "d"}, {"pod", "p"}, {"container", "c"}},
                          });
  DiscoveryReport report;
  auto cheap = discoverLabelNames(fake, query, {}, {}, &report);
  ASSERT_TRUE(cheap.ok()) << cheap.status().toString();
  EXPECT_EQ(report.calls, 3u) << "names, union, one probe for container (pod is required)";
  EXPECT_EQ(fake.totalCalls(), 3u);
  auto full = discoverLabelNamesFromSeries(fake, query, {});
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(*cheap, *full);
}

TEST(DiscoveryTest, FallsBackToSeriesOnlyForNonTransientFailures) {
  const std::string query = "up";
  struct Row {
    const char* what;
    Status labelError;
    bool fallbackAllowed;
    bool wantOk;
    size_t wantSeriesCalls;
  } rows[] = {
      {"server without the label API", failure(FailureKind::kHttpStatus, "404"), true, true, 1},
      {"fallback switched off", failure(FailureKind::kHttpStatus, "404"), false, false, 0},
      {"timeouts are not retried the expensive way", failure(FailureKind::kTimeout, "slow"), true,
       false, 0},
  };
  for (const auto& row : rows) {
    fakes::FakePrometheusClient fake;
    fake.setLabelValues("__name__", {query}, row.labelError);
    fake.setSeries({query}, std::vector<Series>{{{"__name__", "up"}, {"job", "j"}}});
    DiscoveryOptions options;
    options.fallbackToSeries = row.fallbackAllowed;
    DiscoveryReport report;
    auto result = discoverLabelNames(fake, query, {}, options, &report);
    EXPECT_EQ(result.ok(), row.wantOk) << row.what;
    EXPECT_EQ(fake.calls("series:" + query), row.wantSeriesCalls) << row.what;
    EXPECT_EQ(report.usedSeriesFallback, row.wantSeriesCalls > 0) << row.what;
  }
}

TEST(DiscoveryTest, AFailedLabelNamesCallFailsTheDiscovery) {
  fakes::FakePrometheusClient fake;
  const std::string query = R"({pod!=""})";
  fake.setLabelValues("__name__", {query}, Names{"a", "b", "c"});
  fake.setDefaultError(failure(FailureKind::kTimeout, "slow"));
  auto result = discoverLabelNames(fake, query, {});
  ASSERT_FALSE(result.ok()) << "never a partial view";
  EXPECT_EQ(failureKindOf(result.status()), FailureKind::kTimeout);
}

}  // namespace
}  // namespace gpuscale::prom
