#include "gpuscale/sim/vllm_exposition.h"

#include <functional>

namespace gpuscale::sim {
namespace {

ExpositionLabels engineLabels(const VllmEngineSeries& e) {
  return {{"model_name", e.modelName},
          {"engine", e.engine},
          {"namespace", e.namespaceName},
          {"pod", e.pod}};
}

struct VllmFamily {
  std::string_view name;
  std::string_view type;
  std::string_view help;
  std::function<double(const VllmEngineSeries&)> value;
};

// In the order vLLM registers them, HELP texts as it prints them.
const std::vector<VllmFamily>& scalarFamilies() {
  static const std::vector<VllmFamily> kFamilies = {
      {"vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
       [](const VllmEngineSeries& e) { return e.requestsRunning; }},
      {"vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
       [](const VllmEngineSeries& e) { return e.requestsWaiting; }},
      {"vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.",
       [](const VllmEngineSeries& e) { return e.preemptions; }},
      {"vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.",
       [](const VllmEngineSeries& e) { return e.promptTokens; }},
      {"vllm:generation_tokens_total", "counter", "Number of generation tokens processed.",
       [](const VllmEngineSeries& e) { return e.generationTokens; }},
  };
  return kFamilies;
}

struct HistogramFamily {
  std::string_view name;
  std::string_view help;
  const Histogram VllmEngineSeries::*histogram;
};

const std::vector<HistogramFamily>& histogramFamilies() {
  static const std::vector<HistogramFamily> kFamilies = {
      {"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
       &VllmEngineSeries::timeToFirstToken},
      {"vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
       &VllmEngineSeries::interTokenLatency},
      {"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
       &VllmEngineSeries::e2eRequestLatency},
      {"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
       &VllmEngineSeries::requestQueueTime},
      {"vllm:request_inference_time_seconds",
       "Histogram of time spent in RUNNING phase for request.",
       &VllmEngineSeries::requestInferenceTime},
      {"vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
       &VllmEngineSeries::requestPrefillTime},
      {"vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
       &VllmEngineSeries::requestDecodeTime},
  };
  return kFamilies;
}

// The KV-cache gauge under one of its two names, for the engines that use that name.
std::string cacheUsageFamily(const std::vector<VllmEngineSeries>& engines, bool oldName) {
  std::vector<VllmEngineSeries> named;
  for (const VllmEngineSeries& e : engines) {
    if (e.oldCacheUsageName == oldName) named.push_back(e);
  }
  if (named.empty()) return "";
  return formatFamily(
      oldName ? "vllm:gpu_cache_usage_perc" : "vllm:kv_cache_usage_perc", "gauge",
      oldName ? "GPU KV-cache usage. 1 means 100 percent usage."
              : "KV-cache usage. 1 means 100 percent usage.",
      named, engineLabels, [](const VllmEngineSeries& e) { return e.kvCacheUsage; },
      formatPythonSampleValue);
}

}  // namespace

std::string renderVllmSeries(const std::vector<VllmEngineSeries>& engines) {
  std::string out;
  if (engines.empty()) return out;
  const auto& families = scalarFamilies();
  for (std::size_t i = 0; i < 2; ++i) {  // the scheduler gauges come first
    out += formatFamily(families[i].name, families[i].type, families[i].help, engines, engineLabels,
                        families[i].value, formatPythonSampleValue);
  }
  out += cacheUsageFamily(engines, true);
  out += cacheUsageFamily(engines, false);
  for (std::size_t i = 2; i < families.size(); ++i) {
    out += formatFamily(families[i].name, families[i].type, families[i].help, engines, engineLabels,
                        families[i].value, formatPythonSampleValue);
  }
  out += formatFamilyPerValue(
      "vllm:request_success_total", "counter", "Count of successfully processed requests.", engines,
      engineLabels, "finished_reason", kVllmFinishedReasons,
      [](const VllmEngineSeries& e) -> const auto& { return e.requestSuccess; },
      formatPythonSampleValue);
  for (const HistogramFamily& family : histogramFamilies()) {
    out += formatFamilyHeader(family.name, "histogram", family.help);
    for (const VllmEngineSeries& e : engines) {
      out += formatHistogramSamples(family.name, engineLabels(e), e.*family.histogram,
                                    formatPythonSampleValue);
    }
  }
  return out;
}

}  // namespace gpuscale::sim
