#include "gpuscale/prom/discovery.h"

#include <gtest/gtest.h>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/errors.h"
#include "gpuscale/prom/wire.h"
#include "series_backed_client.h"

namespace gpuscale::prom {
namespace discovery_test {

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

TEST(DiscoveryTest, RestrictToMetrics) {
  struct Row {
    const char* what;
    const char* query;
    Names names;
    const char* want;
  } rows[] = {
      {"one name is an equality", R"({pod!=""})", {"a"}, R"({__name__="a",pod!=""})"},
      {"several are a quoted alternation",
       R"({pod!=""})",
       {"a:b", "c.d"},
       R"({__name__=~"a:b|c\\.d",pod!=""})"},
      {"a name regex of the query stays",
       R"({__name__=~"x.*"})",
       {"x1", "x2"},
       R"({__name__=~"x1|x2",__name__=~"x.*"})"},
  };
  for (const auto& row : rows) {
    auto got = restrictToMetrics(row.query, row.names);
    ASSERT_TRUE(got.ok()) << row.what;
    EXPECT_EQ(*got, row.want) << row.what;
  }
}

TEST(DiscoveryTest, NameSelectorOf) {
  struct Row {
    const char* what;
    const char* query;
    const char* selector;
    bool complete;
  } rows[] = {
      {"label matchers only: every name is a candidate", R"({namespace!="",pod!=""})", "", false},
      {"metric name and label matchers", R"(m{pod!=""})", "m", false},
      {"bare metric name", "m", "m", true},
      {"name regex and a label matcher", R"({__name__=~"nv_.*", pod!=""})",
       R"({__name__=~"nv_.*"})", false},
      {"name matchers only", R"({__name__=~"nv_.*",__name__!="nv_x"})",
       R"({__name__=~"nv_.*",__name__!="nv_x"})", true},
      {"a comma inside a quoted value", R"(m{__name__!~"a,b"})", R"(m{__name__!~"a,b"})", true},
  };
  for (const auto& row : rows) {
    auto got = nameSelectorOf(row.query);
    ASSERT_TRUE(got.ok()) << row.what;
    EXPECT_EQ(got->selector, row.selector) << row.what;
    EXPECT_EQ(got->complete, row.complete) << row.what;
  }
  EXPECT_FALSE(nameSelectorOf(R"({pod!="")").ok());
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

TEST(DiscoveryTest, SeriesBodyDecodesStraightToTheLabelNameView) {
  struct Row {
    const char* what;
    const char* body;
    bool ok;
  } rows[] = {
      {"several metrics, labels on some series only",
       R"({"status":"success","data":[{"__name__":"a","pod":"p","namespace":"n"},)"
       R"({"pod":"q","__name__":"a","container":"c"},{"__name__":"b"},{"job":"no name"}]})",
       true},
      {"nested values are skipped, field order does not matter",
       R"({"data":[{"__name__":"a","x":"1"}],"warnings":["w"],"status":"success"})", true},
      {"empty", R"({"status":"success","data":[]})", true},
      {"a label value that is not a string", R"({"status":"success","data":[{"__name__":1}]})",
       false},
      {"data is not an array", R"({"status":"success","data":{}})", false},
      {"a label set that is not an object", R"({"status":"success","data":["a"]})", false},
      {"a Prometheus error", R"({"status":"error","errorType":"bad_data","error":"x"})", false},
  };
  for (const auto& row : rows) {
    auto direct = decodeSeriesLabelNamesResponse(row.ok ? 200 : 400, row.body);
    auto series = decodeSeriesResponse(row.ok ? 200 : 400, row.body);
    ASSERT_EQ(direct.ok(), row.ok) << row.what;
    ASSERT_EQ(series.ok(), row.ok) << row.what;
    if (row.ok) {
      EXPECT_EQ(*direct, labelNamesOf(*series)) << row.what;
    }
  }
}

TEST(DiscoveryTest, BuilderKeepsDistinctSortedLabelNames) {
  MetricLabelNamesBuilder builder;
  builder.add({{"__name__", "a"}, {"z", "1"}, {"b", "2"}});
  builder.add({{"__name__", "a"}, {"m", "1"}, {"b", "3"}});
  builder.add({{"b", "no name"}});
  MetricLabelNames want = {{"a", {"b", "m", "z"}}};
  EXPECT_EQ(builder.take(), want);
}

// Series with the edge cases discovery must get right: labels on only some series of a metric, a
// label only on series the query does not select, metrics without any selected series, names with
// regex metacharacters.
std::vector<Series> edgeCaseSeries() {
  return {
      {{"__name__", "nv_a"}, {"namespace", "n1"}, {"pod", "p1"}, {"container", "c"}},
      {{"__name__", "nv_a"}, {"namespace", "n1"}},  // no pod: not selected by pod!=""
      {{"__name__", "nv_b"}, {"namespace", "n1"}, {"pod", "p2"}},
      {{"__name__", "nv_b"}, {"namespace", "n2"}, {"node", "x"}},  // node only without pod
      {{"__name__", "nv_c"}, {"namespace", "kube-system"}, {"pod", "p3"}, {"zone", "z"}},
      {{"__name__", "nv_d"}, {"job", "j"}},  // no namespace, no pod
      {{"__name__", "nv_e:rate"}, {"namespace", "n1"}, {"pod", "p4"}, {"service", "s"}},
      {{"__name__", "nv_e:rate"}, {"namespace", "n3"}, {"pod", "p5"}},
      {{"__name__", "other"}, {"namespace", "n1"}, {"pod", "p6"}, {"instance", "i"}},
  };
}

// The series view reduced to `labels` (what label presence reports).
MetricLabelNames keepOnly(MetricLabelNames view, const Names& labels) {
  for (auto& [name, present] : view) {
    std::erase_if(present, [&](const std::string& label) {
      return std::find(labels.begin(), labels.end(), label) == labels.end();
    });
  }
  return view;
}

const char* kQueries[] = {
    R"({namespace!="",pod!=""})",     R"({__name__=~"nv_.*",namespace!~"kube-.*",pod!=""})",
    R"({__name__=~"nv_.*"})",         R"(nv_b{namespace="n2"})",
    R"({pod!="",__name__!="other"})", R"({namespace=~"n1|n3"})",
    R"({namespace="nowhere"})",
};

// Option sets that exercise every path on a small data set (shards of one name and more).
std::vector<std::pair<const char*, DiscoveryOptions>> optionRows() {
  DiscoveryOptions split;
  split.minNamesPerShard = 1;
  split.nameShards = 3;
  split.concurrency = 2;
  DiscoveryOptions single;
  single.nameShards = 1;
  DiscoveryOptions tiny = split;
  tiny.maxShardBytes = 8;  // more shards than nameShards, to stay under the byte limit
  DiscoveryOptions serial = split;
  serial.concurrency = 1;
  return {{"split", split},
          {"single call", single},
          {"byte-limited shards", tiny},
          {"one call in flight", serial}};
}

TEST(DiscoveryTest, LabelPresenceEqualsTheSeriesView) {
  const std::vector<Names> labelRows = {
      {"namespace", "pod"}, {"pod", "node"}, {"service", "zone", "container"}, {}};
  for (const char* query : kQueries) {
    for (const Names& wanted : labelRows) {
      for (const auto& [what, options] : optionRows()) {
        testing::SeriesBackedClient client(edgeCaseSeries());
        auto series = discoverLabelNamesFromSeries(client, query, {});
        ASSERT_TRUE(series.ok());
        DiscoveryReport report;
        auto got = discoverLabelPresence(client, query, wanted, {}, options, &report);
        ASSERT_TRUE(got.ok()) << got.status().toString();
        EXPECT_EQ(*got, keepOnly(*series, wanted))
            << query << " with " << what << ", labels " << ::testing::PrintToString(wanted);
        EXPECT_EQ(client.calls("series"), 1u) << "only the reference call";
        EXPECT_EQ(report.calls, client.calls("values") + client.calls("labels"));
      }
    }
  }
}

TEST(DiscoveryTest, EveryLabelNamesStrategyEqualsTheSeriesView) {
  const std::pair<const char*, LabelNamesStrategy> strategies[] = {
      {"auto", LabelNamesStrategy::kAuto},
      {"probes", LabelNamesStrategy::kProbes},
      {"union", LabelNamesStrategy::kUnion},
      {"per metric", LabelNamesStrategy::kPerMetric},
  };
  for (const char* query : kQueries) {
    for (const auto& [strategyName, strategy] : strategies) {
      for (auto [what, options] : optionRows()) {
        options.strategy = strategy;
        testing::SeriesBackedClient client(edgeCaseSeries());
        auto series = discoverLabelNamesFromSeries(client, query, {});
        ASSERT_TRUE(series.ok());
        auto got = discoverLabelNames(client, query, {}, options);
        ASSERT_TRUE(got.ok()) << got.status().toString();
        EXPECT_EQ(*got, *series) << query << " with " << strategyName << ", " << what;
      }
    }
  }
}

// A deduplicating backend's replica labels (Thanos) are on the series its label APIs see but not
// on those queries return: every strategy, and the series fallback, leaves them out.
TEST(DiscoveryTest, ReplicaLabelsAreLeftOutOfEveryView) {
  std::vector<Series> series = edgeCaseSeries();
  for (auto& one : series) one.emplace("replica", "r0");
  DiscoveryOptions options;
  options.replicaLabels = {"replica", "prometheus_replica"};
  const char* query = R"({namespace!="",pod!=""})";
  testing::SeriesBackedClient reference(edgeCaseSeries());
  auto want = discoverLabelNamesFromSeries(reference, query, {});
  ASSERT_TRUE(want.ok());
  for (auto strategy :
       {LabelNamesStrategy::kProbes, LabelNamesStrategy::kUnion, LabelNamesStrategy::kPerMetric}) {
    options.strategy = strategy;
    testing::SeriesBackedClient client(series);
    auto got = discoverLabelNames(client, query, {}, options);
    ASSERT_TRUE(got.ok()) << got.status().toString();
    EXPECT_EQ(*got, *want) << static_cast<int>(strategy);
  }
  testing::SeriesBackedClient client(series);
  auto presence = discoverLabelPresence(client, query, {"pod", "replica"}, {}, options);
  ASSERT_TRUE(presence.ok());
  EXPECT_EQ(*presence, keepOnly(*want, {"pod"}));
}

TEST(DiscoveryTest, TooManyCandidateLabelsSwitchToTheUnionOfTheQuery) {
  testing::SeriesBackedClient client(edgeCaseSeries());
  DiscoveryOptions options;
  options.maxLabelProbes = 2;
  DiscoveryReport report;
  const std::string query = R"({namespace!="",pod!=""})";
  auto got = discoverLabelNames(client, query, {}, options, &report);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(report.strategy, "union") << "7 candidate labels without a name matcher";
  EXPECT_EQ(*got, *discoverLabelNamesFromSeries(client, query, {}));
}

TEST(DiscoveryTest, CallShapes) {
  // What each rule shape costs: the cheap candidate call, then only what the query leaves open.
  struct Row {
    const char* what;
    const char* query;
    std::optional<Names> labels;  // absent: every label name
    std::vector<std::string> wantLog;
  } rows[] = {
      {"override labels the query requires: candidates, then the query",
       R"({namespace!="",pod!=""})",
       Names{"namespace", "pod"},
       {"values:", R"(values: {namespace!="",pod!=""})"}},
      {"a query of name matchers only is answered by the candidate call",
       R"({__name__=~"nv_.*"})",
       Names{},
       {R"(values: {__name__=~"nv_.*"})"}},
      {"one probe per override label the query does not require",
       R"(nv_b{namespace!=""})",
       Names{"namespace", "pod"},
       {"values: nv_b", R"(values: nv_b{namespace!=""})",
        R"(values: nv_b{pod!="",namespace!=""})"}},
      {"template: candidate names and labels, then one probe per open label",
       R"(nv_a{namespace!=""})",
       std::nullopt,
       {"values: nv_a", "labels: nv_a", R"(values: nv_a{namespace!=""})",
        R"(values: nv_a{container!="",namespace!=""})", R"(values: nv_a{pod!="",namespace!=""})"}},
      {"no candidates: nothing more to ask",
       R"(missing{pod!=""})",
       Names{"pod"},
       {"values: missing"}},
  };
  for (const auto& row : rows) {
    testing::SeriesBackedClient client(edgeCaseSeries());
    DiscoveryOptions options;
    options.concurrency = 1;  // a deterministic order
    DiscoveryReport report;
    auto got = discoverMetrics(client, row.query, row.labels, {}, options, &report);
    ASSERT_TRUE(got.ok()) << row.what;
    EXPECT_EQ(client.log(), row.wantLog) << row.what;
    EXPECT_EQ(report.calls, row.wantLog.size()) << row.what;
  }
}

TEST(DiscoveryTest, ShardsSplitTheExpensiveCallsOverDisjointNames) {
  std::vector<Series> series;
  for (int m = 0; m < 10; ++m) {
    series.push_back({{"__name__", "m" + std::to_string(m)}, {"pod", "p"}});
  }
  testing::SeriesBackedClient client(series);
  DiscoveryOptions options;
  options.concurrency = 1;
  options.minNamesPerShard = 4;
  options.nameShards = 3;  // 10 names / 4 per shard: 2 shards
  auto got = discoverLabelPresence(client, R"({pod!=""})", {"pod"}, {}, options);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), 10u);
  std::vector<std::string> want = {
      "values:",
      R"(values: {__name__=~"m0|m1|m2|m3|m4",pod!=""})",
      R"(values: {__name__=~"m5|m6|m7|m8|m9",pod!=""})",
  };
  EXPECT_EQ(client.log(), want);
}

TEST(DiscoveryTest, AnyFailedCallFailsTheWholeDiscovery) {
  for (const char* kind : {"values", "labels"}) {
    for (auto [what, options] : optionRows()) {
      testing::SeriesBackedClient client(edgeCaseSeries());
      client.failCalls(kind, failure(FailureKind::kTimeout, "slow"));
      auto got = discoverLabelNames(client, R"({namespace!="",pod!=""})", {}, options);
      ASSERT_FALSE(got.ok()) << kind << ", " << what << ": never a partial view";
      EXPECT_EQ(failureKindOf(got.status()), FailureKind::kTimeout);
      EXPECT_EQ(client.calls("series"), 0u) << "a timeout is not retried the expensive way";
    }
  }
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

}  // namespace discovery_test
}  // namespace gpuscale::prom
