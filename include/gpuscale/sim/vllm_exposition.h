// VllmExposition: the one place that formats vLLM's engine series (the v1 engine's Prometheus
// logger, `/metrics` on the OpenAI port) in the Prometheus text format, for the load model on
// `gpuscale-sim run`'s /metrics (a scenario whose `workload.server` is vllm), `gpuscale-sim
// exporter --server vllm` and the tests. Shares its format with triton_exposition.h
// (text_exposition.h).
//
// What vLLM serves (names, types, labels, buckets and HELP texts of its v1 PrometheusStatLogger;
// values printed as Python's prometheus_client prints them, "3.0"):
// clang-format off
//   vllm:num_requests_running         gauge      requests in the running batch
//   vllm:num_requests_waiting         gauge      requests waiting to be scheduled
//   vllm:kv_cache_usage_perc          gauge      KV-cache blocks in use, a fraction 0..1 despite
//                                                the name; `vllm:gpu_cache_usage_perc` instead for a
//                                                pod of a release before the rename (before 0.9.2;
//                                                both names 0.9.2-0.10, only the new one from 0.12)
//   vllm:num_preemptions_total        counter
//   vllm:prompt_tokens_total          counter    prefill tokens
//   vllm:generation_tokens_total      counter    generated tokens
//   vllm:request_success_total        counter    + finished_reason (stop, length, abort; each
//                                                series present from the start at 0)
//   vllm:time_to_first_token_seconds  histogram  kVllmTimeToFirstTokenBuckets
//   vllm:inter_token_latency_seconds  histogram  kVllmInterTokenLatencyBuckets
//   vllm:e2e_request_latency_seconds, vllm:request_queue_time_seconds,
//   vllm:request_inference_time_seconds, vllm:request_prefill_time_seconds,
//   vllm:request_decode_time_seconds  histogram  kVllmRequestLatencyBuckets
// clang-format on
// Every series has vLLM's labels `model_name` (the served model name) and `engine` (the engine
// index, "0" unless data parallel), then `namespace` and `pod`: what Prometheus attaches from the
// scrape target in a cluster (the simulator serves every pod from one target, so it writes them).
// Counters are cumulative since the pod (vLLM) started. Not served: the `_created` series
// (prometheus_client with PROMETHEUS_DISABLE_CREATED_SERIES), prefix-cache, LoRA, speculative
// decoding and token-count histograms, `vllm:cache_config_info`.
//
// Thread safety: pure functions over values.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/sim/text_exposition.h"

namespace gpuscale::sim {

// vLLM's bucket bounds (seconds).
inline constexpr double kVllmTimeToFirstTokenBuckets[] = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
    1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
inline constexpr double kVllmInterTokenLatencyBuckets[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                                           0.3,  0.4,   0.5,  0.75,  1.0, 2.5,  5.0,
                                                           7.5,  10.0,  20.0, 40.0,  80.0};
inline constexpr double kVllmRequestLatencyBuckets[] = {
    0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
    30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

// The `finished_reason` values of vllm:request_success_total.
inline constexpr std::string_view kVllmFinishedReasons[] = {"stop", "length", "abort"};

// One engine of one pod: its gauges, cumulative counters and histograms.
struct VllmEngineSeries {
  std::string namespaceName;
  std::string pod;
  std::string modelName = "simple";  // --served-model-name
  std::string engine = "0";
  // A release before the KV-cache gauge's rename: vllm:gpu_cache_usage_perc instead.
  bool oldCacheUsageName = false;
  double requestsRunning = 0;
  double requestsWaiting = 0;
  double kvCacheUsage = 0;  // fraction 0..1
  double preemptions = 0;
  double promptTokens = 0;
  double generationTokens = 0;
  std::map<std::string, double> requestSuccess;  // finished_reason -> count; missing reasons are 0
  Histogram timeToFirstToken{kVllmTimeToFirstTokenBuckets};
  Histogram interTokenLatency{kVllmInterTokenLatencyBuckets};
  Histogram e2eRequestLatency{kVllmRequestLatencyBuckets};
  Histogram requestQueueTime{kVllmRequestLatencyBuckets};
  Histogram requestInferenceTime{kVllmRequestLatencyBuckets};
  Histogram requestPrefillTime{kVllmRequestLatencyBuckets};
  Histogram requestDecodeTime{kVllmRequestLatencyBuckets};
};

// The vLLM families for `engines` (HELP and TYPE once per family, then one series per engine, in
// the given order). No engines, no families.
std::string renderVllmSeries(const std::vector<VllmEngineSeries>& engines);

}  // namespace gpuscale::sim
