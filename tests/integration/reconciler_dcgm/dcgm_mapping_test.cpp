// DcgmGpuPodMapping against the real Debian Prometheus scraping a dcgm-exporter-like target (the
// series and labels dcgm-exporter renders with its Kubernetes mapping on): per-GPU answers, a pod
// moving between GPUs, a pod the series do not name yet, an exporter that stops (a mig-manager run
// pauses it) and a Prometheus that is gone. Skipped when prometheus is not installed.
#include <gtest/gtest.h>

#include <thread>

#include "gpuscale/prom/http_client.h"
#include "gpuscale/reconciler/dcgm_gpu_pod_mapping.h"
#include "support/exporter_server.h"
#include "support/prometheus_server.h"

namespace gpuscale::reconciler {
namespace dcgm_mapping_test {

using test::ExporterServer;
using test::PrometheusServer;
using test::PrometheusServerOptions;
using Clock = std::chrono::system_clock;
constexpr const char* kField = "DCGM_FI_DEV_FB_USED";

ExporterServer::Labels gpuSeries(const std::string& node, int index, const std::string& pod = "",
                                 const std::string& migInstance = "") {
  ExporterServer::Labels l{{"gpu", std::to_string(index)},
                           {"UUID", "GPU-" + node + "-" + std::to_string(index)},
                           {"device", "nvidia" + std::to_string(index)},
                           {"modelName", "NVIDIA A100-SXM4-40GB"},
                           {"Hostname", node}};
  if (!migInstance.empty()) {
    l["GPU_I_ID"] = migInstance;
    l["GPU_I_PROFILE"] = "1g.5gb";
  }
  if (!pod.empty()) {
    l["pod"] = pod;
    l["namespace"] = "default";
    l["container"] = "triton";
  }
  return l;
}

// Pods that started long ago (never waited for).
NodeGpuPods longRunning(const std::set<std::string>& pods) {
  NodeGpuPods out;
  for (const auto& pod : pods) out[pod] = Clock::time_point{};
  return out;
}

// Asks until the answer equals `want` (Prometheus scrapes every second) or 30 s pass.
std::optional<GpuOccupancy> askUntil(DcgmGpuPodMapping& mapping, const std::string& node,
                                     const std::set<std::string>& pods,
                                     const std::optional<GpuOccupancy>& want) {
  std::optional<GpuOccupancy> got;
  for (int i = 0; i < 300; ++i) {
    got = mapping.occupancy(node, longRunning(pods), Clock::now());
    if (got == want) return got;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return got;
}

TEST(DcgmMappingRealPrometheusTest, FollowsTheExporterAndFallsBackWhenItCannotTell) {
  if (!PrometheusServer::available()) GTEST_SKIP() << "prometheus is not installed";
  ExporterServer exporter;
  exporter.set(kField, gpuSeries("node-a", 0, "triton-0"), 4000);
  exporter.set(kField, gpuSeries("node-a", 1), 0);
  exporter.set(kField, gpuSeries("node-b", 0, "", "7"), 0);
  exporter.set(kField, gpuSeries("node-b", 1, "llm-0", "8"), 900);
  PrometheusServerOptions options;
  options.scrapeTargets = {exporter.target()};
  auto server = PrometheusServer::start(options);
  ASSERT_TRUE(server.ok()) << server.status().toString();
  prom::PrometheusOptions clientOptions;
  clientOptions.url = (*server)->url();
  auto client = prom::HttpClient::create(clientOptions);
  ASSERT_TRUE(client.ok()) << client.status().toString();
  DcgmMappingOptions mappingOptions;
  mappingOptions.maxAge = std::chrono::seconds(30);
  DcgmGpuPodMapping mapping(std::shared_ptr<prom::Client>(std::move(*client)), mappingOptions,
                            nullptr);

  EXPECT_EQ(askUntil(mapping, "node-a", {"default/triton-0"}, GpuOccupancy{{0, 1}, {0}}),
            (GpuOccupancy{{0, 1}, {0}}))
      << "triton-0 holds GPU 0; GPU 1 is idle";
  EXPECT_EQ(askUntil(mapping, "node-b", {"default/llm-0"}, GpuOccupancy{{0, 1}, {1}}),
            (GpuOccupancy{{0, 1}, {1}}))
      << "MIG instance series count for their parent GPU";

  // A pod the API has had for long but the series do not name: the node-level rule.
  EXPECT_EQ(mapping.occupancy("node-a", longRunning({"default/triton-0", "default/triton-1"}),
                              Clock::now()),
            std::nullopt);
  // One that started a moment ago while GPU 1 looks idle: settling (no GPU idle yet).
  const auto settling = mapping.occupancy(
      "node-a", {{"default/triton-0", Clock::time_point{}}, {"default/triton-1", Clock::now()}},
      Clock::now());
  ASSERT_TRUE(settling.has_value());
  EXPECT_EQ(settling->settling, std::set<std::string>{"default/triton-1"});
  EXPECT_FALSE(settling->idle(1));

  // triton-0 ends, triton-1 starts on GPU 1.
  exporter.clear(kField);
  exporter.set(kField, gpuSeries("node-a", 0), 0);
  exporter.set(kField, gpuSeries("node-a", 1, "triton-1"), 3000);
  exporter.set(kField, gpuSeries("node-b", 0, "", "7"), 0);
  exporter.set(kField, gpuSeries("node-b", 1, "llm-0", "8"), 900);
  EXPECT_EQ(askUntil(mapping, "node-a", {"default/triton-1"}, GpuOccupancy{{0, 1}, {1}}),
            (GpuOccupancy{{0, 1}, {1}}));

  // node-a's exporter stops (paused for a MIG change): its series go stale in Prometheus.
  exporter.clear(kField);
  exporter.set(kField, gpuSeries("node-b", 0, "", "7"), 0);
  exporter.set(kField, gpuSeries("node-b", 1, "llm-0", "8"), 900);
  EXPECT_EQ(askUntil(mapping, "node-a", {"default/triton-1"}, std::nullopt), std::nullopt);
  EXPECT_EQ(mapping.occupancy("node-b", longRunning({"default/llm-0"}), Clock::now()),
            (GpuOccupancy{{0, 1}, {1}}));

  // Prometheus is gone: an error, so the node-level rule.
  (*server)->stop();
  EXPECT_EQ(mapping.occupancy("node-b", longRunning({"default/llm-0"}), Clock::now()),
            std::nullopt);
}

}  // namespace dcgm_mapping_test
}  // namespace gpuscale::reconciler
