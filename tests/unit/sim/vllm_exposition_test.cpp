#include "gpuscale/sim/vllm_exposition.h"

#include <gtest/gtest.h>

#include "exposition_lines.h"

namespace gpuscale::sim {
namespace vllm_exposition_test {

using testing::ExpositionLine;
using testing::withLabel;

std::vector<VllmEngineSeries> twoPods() {
  VllmEngineSeries a;
  a.namespaceName = "default";
  a.pod = "vllm-0";
  a.modelName = "Qwen/Qwen2.5-0.5B-Instruct";
  a.requestsWaiting = 4;
  a.requestsRunning = 1;
  a.kvCacheUsage = 0.5;
  a.promptTokens = 2048;
  a.generationTokens = 512;
  a.requestSuccess["stop"] = 8;
  a.timeToFirstToken.observe(0.3, 8);
  a.requestQueueTime.observe(1.25, 8);
  VllmEngineSeries old;
  old.namespaceName = "ns";
  old.pod = "vllm-1";
  old.engine = "1";
  old.oldCacheUsageName = true;
  old.kvCacheUsage = 0.875;
  return {a, old};
}

TEST(VllmExpositionTest, NamesTypesLabelsAndValues) {
  const std::string text = renderVllmSeries(twoPods());
  const std::string a = testing::vllmLabels("Qwen/Qwen2.5-0.5B-Instruct", "0", "default", "vllm-0");
  const std::string old = testing::vllmLabels("simple", "1", "ns", "vllm-1");
  // The line of pod a's `family` histogram bucket `le`.
  const auto bucket = [&](const std::string& family, const std::string& le, const char* value) {
    return "vllm:" + family + "_bucket" + withLabel(a, "le=\"" + le + "\"") + " " + value + "\n";
  };
  const std::vector<ExpositionLine> rows = {
      {"waiting is a gauge", "# TYPE vllm:num_requests_waiting gauge\n"},
      {"running is a gauge", "# TYPE vllm:num_requests_running gauge\n"},
      {"running HELP",
       "# HELP vllm:num_requests_running Number of requests in model execution "
       "batches.\n"},
      {"waiting, Python-style value", "vllm:num_requests_waiting" + a + " 4.0\n"},
      {"running", "vllm:num_requests_running" + a + " 1.0\n"},
      {"KV cache, current name", "vllm:kv_cache_usage_perc" + a + " 0.5\n"},
      {"KV cache, the name before the rename", "vllm:gpu_cache_usage_perc" + old + " 0.875\n"},
      {"counters end in _total", "# TYPE vllm:generation_tokens_total counter\n"},
      {"generated tokens", "vllm:generation_tokens_total" + a + " 512.0\n"},
      {"prompt tokens", "vllm:prompt_tokens_total" + a + " 2048.0\n"},
      {"preemptions", "vllm:num_preemptions_total" + a + " 0.0\n"},
      {"success by finished_reason",
       "vllm:request_success_total" + withLabel(a, R"(finished_reason="stop")") + " 8.0\n"},
      {"every finished_reason starts at 0",
       "vllm:request_success_total" + withLabel(old, R"(finished_reason="abort")") + " 0.0\n"},
      {"TTFT is a histogram", "# TYPE vllm:time_to_first_token_seconds histogram\n"},
      {"TTFT first bucket", bucket("time_to_first_token_seconds", "0.001", "0.0")},
      {"TTFT: 0.3 s is above 0.25", bucket("time_to_first_token_seconds", "0.25", "0.0")},
      {"TTFT: and within 0.5", bucket("time_to_first_token_seconds", "0.5", "8.0")},
      {"TTFT last bound", bucket("time_to_first_token_seconds", "2560.0", "8.0")},
      {"queue time in the request-latency buckets",
       bucket("request_queue_time_seconds", "1.5", "8.0")},
      {"queue time below 1.25", bucket("request_queue_time_seconds", "1.0", "0.0")},
      {"queue time sum", "vllm:request_queue_time_seconds_sum" + a + " 10.0\n"},
      {"queue time count", "vllm:request_queue_time_seconds_count" + a + " 8.0\n"},
      {"ITL histogram", "# TYPE vllm:inter_token_latency_seconds histogram\n"},
      {"e2e histogram", "# TYPE vllm:e2e_request_latency_seconds histogram\n"},
      {"inference time histogram", "# TYPE vllm:request_inference_time_seconds histogram\n"},
      {"prefill time histogram", "# TYPE vllm:request_prefill_time_seconds histogram\n"},
      {"decode time histogram", "# TYPE vllm:request_decode_time_seconds histogram\n"},
      {"ITL bounds", "le=\"0.075\""},
      {"request latency last bound", "le=\"7680.0\""},
  };
  testing::expectLines(text, rows);
  const std::vector<ExpositionLine> absent = {
      {"the current pod has no old gauge", "vllm:gpu_cache_usage_perc" + a},
      {"the old pod has no new gauge", "vllm:kv_cache_usage_perc" + old},
      {"no _created series", "_created"},
      {"a counter's TYPE names it with _total", "# TYPE vllm:request_success counter"},
  };
  testing::expectNoLines(text, absent);
}

TEST(VllmExpositionTest, OneHeaderPerFamilyAndBucketCounts) {
  const std::string text = renderVllmSeries(twoPods());
  for (const char* family : {"vllm:num_requests_waiting", "vllm:request_success_total",
                             "vllm:time_to_first_token_seconds"}) {
    const std::string type = std::string("# TYPE ") + family + " ";
    EXPECT_EQ(text.find(type), text.rfind(type)) << family;
  }
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  };
  // Bounds + the +Inf bucket, per engine.
  EXPECT_EQ(count("vllm:time_to_first_token_seconds_bucket{"),
            2 * (std::size(kVllmTimeToFirstTokenBuckets) + 1));
  EXPECT_EQ(count("vllm:request_queue_time_seconds_bucket{"),
            2 * (std::size(kVllmRequestLatencyBuckets) + 1));
  EXPECT_EQ(count("vllm:inter_token_latency_seconds_bucket{"),
            2 * (std::size(kVllmInterTokenLatencyBuckets) + 1));
  EXPECT_EQ(count("vllm:request_success_total{"), 2 * std::size(kVllmFinishedReasons));
  EXPECT_EQ(renderVllmSeries({}), "") << "no engines, no families";
}

}  // namespace vllm_exposition_test
}  // namespace gpuscale::sim
