// VllmModel: the series vLLM pods export (vllm_exposition.h), generated from a steady load per
// engine, plus kube-state-metrics' label series for those pods (kube_state_labels.h).
// `gpuscale-sim exporter --server vllm` serves it; the vLLM rules' integration test checks what the
// adapter serves against these numbers.
//
// Each engine has a request rate and fixed per-request times, so at `elapsed` seconds since start
// it has completed n = round(rate × elapsed) requests (finished_reason stop), each of which waited
// `queueSeconds` and saw its first token after `timeToFirstTokenSeconds`: the queue-time and TTFT
// histograms hold n observations of that one value (sum = n × value, all in one bucket), and the
// token counters n × the tokens per request. Gauges are constant. So over any window
// rate(..._sum) / rate(..._count) is exactly the per-request time, and histogram_quantile(q) is the
// bucket's lower bound + q × its width.
//
// Thread safety: immutable after construction; render() is const (exporter_model.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuscale/sim/exporter_model.h"

namespace gpuscale::sim {

struct VllmEngineLoad {
  std::string pod;
  std::string engine = "0";
  double requestsPerSecond = 0;
  double queueSeconds = 0;
  double timeToFirstTokenSeconds = 0;
  double promptTokensPerRequest = 0;
  double generationTokensPerRequest = 0;
  double waiting = 0;
  double running = 0;
  double kvCacheUsage = 0;
  bool oldCacheUsageName = false;  // vllm:gpu_cache_usage_perc (a release before the rename)
};

struct VllmModelOptions : ExporterNamespace {
  std::string modelName = "Qwen/Qwen2.5-0.5B-Instruct";
  std::map<std::string, std::map<std::string, std::string>> podLabels;  // pod -> Kubernetes labels
  std::vector<VllmEngineLoad> engines;
};

// Four pods: a busy one, an idle one, one with two data-parallel engines, and one of a release
// before the KV-cache gauge's rename.
VllmModelOptions demoVllmModel();

// The series of `options`' pods at `elapsedSeconds` since start (VllmModel::render()).
std::string renderExposition(const VllmModelOptions& options, double elapsedSeconds);

using VllmModel = ExporterModel<VllmModelOptions>;

}  // namespace gpuscale::sim
