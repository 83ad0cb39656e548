#include "gpuscale/reconciler/dcgm_gpu_pod_mapping.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <sstream>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::reconciler {
namespace {

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
    EXPECT_EQ(mapping.occupancy("node-a", row.apiPods, kNow), row.want);
    EXPECT_EQ(client->calls("query:" + query), 1u);
    EXPECT_NE(metricsText(registry).find("gpuscale_reconciler_gpu_mapping_total{result=\"" +
                                         row.counted + "\"} 1"),
              std::string::npos)
        << metricsText(registry);
  }
}

TEST(DcgmGpuPodMappingTest, QueryAsksEveryNodeLabelAndQuotesTheNodeName) {
  DcgmGpuPodMapping mapping(std::make_shared<fakes::FakePrometheusClient>(), {}, nullptr);
  EXPECT_EQ(mapping.queryFor("gpu-a\"}) or vector(1"),
            "timestamp(DCGM_FI_DEV_FB_USED{Hostname=\"gpu-a\\\"}) or vector(1\"}) or "
            "timestamp(DCGM_FI_DEV_FB_USED{hostname=\"gpu-a\\\"}) or vector(1\"})");
}

}  // namespace
}  // namespace gpuscale::reconciler
