#include "gpuscale/reconciler/dcgm_gpu_pod_mapping.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <sstream>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::reconciler {
namespace dcgm_gpu_pod_mapping_test {

using Clock = std::chrono::system_clock;
const Clock::time_point kNow = Clock::time_point(std::chrono::seconds(1'800'000'000));

// One dcgm-exporter series: its labels and how long ago it was scraped.
struct Series {
  prom::Labels labels;
  int ageSeconds = 5;
};

prom::Labels gpu(const std::string& index, const std::string& ns = "", const std::string& pod = "",
                 prom::Labels extra = {}) {
  prom::Labels l{{"gpu", index},
                 {"UUID", "GPU-" + index},
                 {"Hostname", "node-a"},
                 {"modelName", "NVIDIA A100-SXM4-40GB"}};
  if (!pod.empty()) {
    l["namespace"] = ns;
    l["pod"] = pod;
  }
  for (auto& [k, v] : extra) l[k] = v;
  return l;
}

struct Row {
  const char* what;
  std::vector<Series> series;
  std::set<std::string> apiPods;  // GPU pods the API places on the node
  std::optional<GpuOccupancy> want;
  std::string counted;  // the gpuscale_reconciler_gpu_mapping_total result label
  std::optional<core::Status> error = std::nullopt;
  DcgmMappingOptions options = {};
};

DcgmMappingOptions exportedLabels() {
  DcgmMappingOptions o;
  o.podLabel = "exported_pod";
  o.namespaceLabel = "exported_namespace";
  return o;
}

std::vector<Row> rows() {
  return {
      {"a pod on GPU 0, GPU 1 free: per GPU",
       {{gpu("0", "default", "triton-0")}, {gpu("1")}},
       {"default/triton-0"},
       GpuOccupancy{{0, 1}, {0}},
       "per_gpu"},
      {"MIG instances carry the parent's gpu label: a pod on an instance of GPU 1 makes GPU 1 busy",
       {{gpu("0", "", "", {{"GPU_I_ID", "1"}, {"GPU_I_PROFILE", "3g.20gb"}})},
        {gpu("1", "ml", "llm-0", {{"GPU_I_ID", "2"}, {"GPU_I_PROFILE", "1g.5gb"}})},
        {gpu("1", "", "", {{"GPU_I_ID", "3"}, {"GPU_I_PROFILE", "1g.5gb"}})}},
       {"ml/llm-0"},
       GpuOccupancy{{0, 1}, {1}},
       "per_gpu"},
      {"a pod that holds two GPUs makes both busy",
       {{gpu("0", "default", "big-0")}, {gpu("1", "default", "big-0")}, {gpu("2")}},
       {"default/big-0"},
       GpuOccupancy{{0, 1, 2}, {0, 1}},
       "per_gpu"},
      {"a pod the series still name but the API no longer has keeps its GPU busy",
       {{gpu("0", "default", "gone-0")}, {gpu("1")}},
       {},
       GpuOccupancy{{0, 1}, {0}},
       "per_gpu"},
      {"a running GPU pod the series do not name: the node-level rule",
       {{gpu("0", "default", "triton-0")}, {gpu("1")}},
       {"default/triton-0", "default/triton-1"},
       std::nullopt,
       "fallback_unaccounted"},
      {"a pod of the same name in another namespace does not count",
       {{gpu("0", "other", "triton-0")}, {gpu("1")}},
       {"default/triton-0"},
       std::nullopt,
       "fallback_unaccounted"},
      {"one series older than the max age (exporter paused by mig-manager): the node-level rule",
       {{gpu("0", "default", "triton-0"), 5}, {gpu("1"), 600}},
       {"default/triton-0"},
       std::nullopt,
       "fallback_stale"},
      {"no series for the node: the node-level rule",
       {},
       {"default/triton-0"},
       std::nullopt,
       "fallback_absent"},
      {"Prometheus unreachable: the node-level rule, never an empty answer",
       {},
       {"default/triton-0"},
       std::nullopt,
       "fallback_error",
       prom::failure(prom::FailureKind::kConnection, "connection refused", true)},
      {"a gpu label that is not an index: the node-level rule",
       {{gpu("0", "default", "triton-0")}, {gpu("nvidia1")}},
       {"default/triton-0"},
       std::nullopt,
       "fallback_malformed"},
      {"a series without a gpu label: the node-level rule",
       {{gpu("0", "default", "triton-0")}, {{{"Hostname", "node-a"}}}},
       {"default/triton-0"},
       std::nullopt,
       "fallback_malformed"},
      {"honorLabels off: the workload is in exported_pod, pod names the exporter",
       {{gpu("0", "", "",
             {{"pod", "dcgm-exporter-x"},
              {"namespace", "gpu-operator"},
              {"exported_pod", "triton-0"},
              {"exported_namespace", "default"}})},
        {gpu("1", "", "", {{"pod", "dcgm-exporter-x"}, {"namespace", "gpu-operator"}})}},
       {"default/triton-0"},
       GpuOccupancy{{0, 1}, {0}},
       "per_gpu",
       std::nullopt,
       exportedLabels()},
  };
}

std::string metricsText(const std::shared_ptr<prometheus::Registry>& registry) {
  prometheus::TextSerializer serializer;
  std::ostringstream out;
  serializer.Serialize(out, registry->Collect());
  return out.str();
}

TEST(DcgmGpuPodMappingTest, Table) {
  for (const auto& row : rows()) {
    SCOPED_TRACE(row.what);
    auto client = std::make_shared<fakes::FakePrometheusClient>();
    auto registry = std::make_shared<prometheus::Registry>();
    auto metrics = std::make_shared<ReconcilerMetrics>(registry);
    DcgmGpuPodMapping mapping(client, row.options, metrics);
    const std::string query = mapping.queryFor("node-a");
    if (row.error) {
      client->setQuery(query, *row.error);
    } else {
      std::vector<prom::Sample> samples;
      for (const auto& s : row.series) {
        const auto at = kNow - std::chrono::seconds(s.ageSeconds);
        samples.push_back(
            {s.labels, {kNow, std::chrono::duration<double>(at.time_since_epoch()).count()}});
      }
      client->setVector(query, samples);
    }
    NodeGpuPods pods;  // started long ago: nothing settles
    for (const auto& pod : row.apiPods) pods[pod] = Clock::time_point{};
    EXPECT_EQ(mapping.occupancy("node-a", pods, kNow), row.want);
    EXPECT_EQ(client->calls("query:" + query), 1u);
    EXPECT_NE(metricsText(registry).find("gpuscale_reconciler_gpu_mapping_total{result=\"" +
                                         row.counted + "\"} 1"),
              std::string::npos)
        << metricsText(registry);
  }
}

std::vector<prom::Sample> scraped(const std::vector<prom::Labels>& series) {
  std::vector<prom::Sample> samples;
  const double at = std::chrono::duration<double>(kNow.time_since_epoch()).count() - 5;
  for (const auto& labels : series) samples.push_back({labels, {kNow, at}});
  return samples;
}

TEST(DcgmGpuPodMappingTest, WaitsBoundedForPodsThatJustStarted) {
  using std::chrono::seconds;
  const auto old = Clock::time_point{};
  struct Row {
    const char* what;
    std::vector<prom::Labels> series;
    NodeGpuPods pods;
    // Asked at kNow and then again `later` seconds on, with the same series; new pods keep
    // arriving (each pod that was young is 5 s old again then).
    int later;
    std::set<std::string> settling, settlingLater;  // empty: not settling
    bool fallsBackLater;
    std::string counted;  // the result label of the first answer
  };
  const std::vector<Row> rows{
      {"a pod 5 s old is missing and GPU 1 looks idle: settling, still within 60 s",
       {gpu("0", "default", "t-0"), gpu("1")},
       {{"default/t-0", old}, {"default/t-1", kNow - seconds(5)}},
       30,
       {"default/t-1"},
       {"default/t-1"},
       false,
       "settling"},
      {"the wait is bounded per node, however young the pods: after 90 s the node-level rule",
       {gpu("0", "default", "t-0"), gpu("1")},
       {{"default/t-0", old}, {"default/t-1", kNow - seconds(5)}},
       95,
       {"default/t-1"},
       {},
       true,
       "settling"},
      {"a missing pod older than the settle window is not a lag: the node-level rule",
       {gpu("0", "default", "t-0"), gpu("1")},
       {{"default/t-0", old}, {"default/t-1", kNow - seconds(200)}},
       0,
       {},
       {},
       true,
       "fallback_unaccounted"},
      {"no GPU looks idle: waiting could free nothing, the node-level rule at once",
       {gpu("0", "default", "t-0"), gpu("1", "default", "t-2")},
       {{"default/t-0", old}, {"default/t-2", old}, {"default/t-1", kNow - seconds(5)}},
       0,
       {},
       {},
       true,
       "fallback_unaccounted"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto client = std::make_shared<fakes::FakePrometheusClient>();
    auto registry = std::make_shared<prometheus::Registry>();
    DcgmGpuPodMapping mapping(client, {}, std::make_shared<ReconcilerMetrics>(registry));
    client->setVector(mapping.queryFor("node-a"), scraped(row.series));
    auto first = mapping.occupancy("node-a", row.pods, kNow);
    if (row.settling.empty()) {
      EXPECT_EQ(first, std::nullopt);
    } else {
      ASSERT_TRUE(first.has_value());
      EXPECT_EQ(first->settling, row.settling);
      EXPECT_FALSE(first->idle(1)) << "an incomplete answer frees no GPU";
    }
    EXPECT_NE(metricsText(registry).find("gpuscale_reconciler_gpu_mapping_total{result=\"" +
                                         row.counted + "\"} 1"),
              std::string::npos)
        << metricsText(registry);
    const auto later = kNow + seconds(row.later);
    NodeGpuPods laterPods;
    for (const auto& [pod, started] : row.pods)
      laterPods[pod] = kNow - started < seconds(90) ? later - seconds(5) : started;
    auto second = mapping.occupancy("node-a", laterPods, later);
    EXPECT_EQ(!second.has_value(), row.fallsBackLater);
    if (second) {
      EXPECT_EQ(second->settling, row.settlingLater);
    }
  }
}

TEST(DcgmGpuPodMappingTest, SettledAnswerEndsTheWait) {
  auto client = std::make_shared<fakes::FakePrometheusClient>();
  DcgmGpuPodMapping mapping(client, {}, nullptr);
  const NodeGpuPods pods{{"default/t-0", kNow - std::chrono::seconds(3)}};
  client->setVector(mapping.queryFor("node-a"), scraped({gpu("0"), gpu("1")}));
  ASSERT_EQ(mapping.occupancy("node-a", pods, kNow)->settling,
            std::set<std::string>{"default/t-0"});
  client->setVector(mapping.queryFor("node-a"), scraped({gpu("0", "default", "t-0"), gpu("1")}));
  auto settled = mapping.occupancy("node-a", pods, kNow + std::chrono::seconds(2));
  ASSERT_TRUE(settled.has_value());
  EXPECT_TRUE(settled->settling.empty());
  EXPECT_TRUE(settled->idle(1));
  EXPECT_FALSE(settled->idle(0));
}

TEST(DcgmGpuPodMappingTest, UtilizationPerResource) {
  struct Row {
    const char* what;
    std::string metric;
    std::vector<prom::Labels> series;
    std::vector<double> values;
    std::map<std::string, double, std::less<>> want;
  };
  const std::vector<Row> rows{
      {"MIG instances that hold pods average per profile; a free instance does not count",
       "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
       {gpu("0", "default", "a", {{"GPU_I_PROFILE", "1g.5gb"}, {"GPU_I_ID", "1"}}),
        gpu("0", "default", "b", {{"GPU_I_PROFILE", "1g.5gb"}, {"GPU_I_ID", "2"}}),
        gpu("0", "", "", {{"GPU_I_PROFILE", "1g.5gb"}, {"GPU_I_ID", "3"}}),
        gpu("1", "default", "c", {{"GPU_I_PROFILE", "3g.20gb"}, {"GPU_I_ID", "1"}}),
        gpu("1", "", "", {{"GPU_I_PROFILE", "3g.20gb"}, {"GPU_I_ID", "2"}})},
       {0.9, 0.7, 0.0, 0.2, 0.0},
       {{"nvidia.com/mig-1g.5gb", 0.8}, {"nvidia.com/mig-3g.20gb", 0.2}}},
      {"whole GPUs in percent (a _UTIL metric)",
       "DCGM_FI_DEV_GPU_UTIL",
       {gpu("0", "default", "a"), gpu("1", "default", "b")},
       {90, 50},
       {{"nvidia.com/gpu", 0.7}}},
      {"no device holds a pod: unknown", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", {gpu("0")}, {0.9}, {}},
      {"no utilisation metric: unknown", "", {gpu("0", "default", "a")}, {0.9}, {}},
  };

  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto client = std::make_shared<fakes::FakePrometheusClient>();
    DcgmMappingOptions options;
    options.utilizationMetric = row.metric;
    DcgmGpuPodMapping mapping(client, options, nullptr);
    client->setVector(mapping.queryFor("node-a"), scraped({gpu("0"), gpu("1")}));
    std::vector<prom::Sample> util;
    for (std::size_t i = 0; i < row.series.size(); ++i)
      util.push_back({row.series[i], {kNow, row.values[i]}});
    if (!row.metric.empty()) client->setVector(mapping.utilizationQueryFor("node-a"), util);
    auto got = mapping.occupancy("node-a", {}, kNow);
    ASSERT_TRUE(got.has_value());
    ASSERT_EQ(got->utilization.size(), row.want.size());
    for (const auto& [resource, value] : row.want)
      EXPECT_NEAR(got->utilization.at(resource), value, 1e-9) << resource;
  }
}

TEST(DcgmGpuPodMappingTest, QueryAsksEveryNodeLabelAndQuotesTheNodeName) {
  DcgmGpuPodMapping mapping(std::make_shared<fakes::FakePrometheusClient>(), {}, nullptr);
  EXPECT_EQ(mapping.queryFor("gpu-a\"}) or vector(1"),
            "timestamp(DCGM_FI_DEV_FB_USED{Hostname=\"gpu-a\\\"}) or vector(1\"}) or "
            "timestamp(DCGM_FI_DEV_FB_USED{hostname=\"gpu-a\\\"}) or vector(1\"})");
  EXPECT_EQ(mapping.utilizationQueryFor("gpu-a"),
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE{Hostname=\"gpu-a\"} or "
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE{hostname=\"gpu-a\"}");
}

}  // namespace dcgm_gpu_pod_mapping_test
}  // namespace gpuscale::reconciler
