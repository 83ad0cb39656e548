#include "gpuscale/sim/vllm_model.h"

#include <cmath>

#include "gpuscale/sim/kube_state_labels.h"
#include "gpuscale/sim/vllm_exposition.h"

namespace gpuscale::sim {

VllmModelOptions demoVllmModel() {
  VllmModelOptions options;
  options.namespaceLabels = {{"team", "inference"}};
  const std::map<std::string, std::string> labels = {{"app", "vllm"}};
  for (const char* pod : {"vllm-0", "vllm-1", "vllm-2", "vllm-3"}) options.podLabels[pod] = labels;
  options.podLabels["vllm-3"]["release"] = "old";
  // pod, engine, req/s, queue s, TTFT s, prompt and generated tokens per request, waiting,
  // running, KV-cache usage, old gauge name
  options.engines = {
      {"vllm-0", "0", 2, 1.25, 1.5, 200, 100, 4, 1, 0.5, false},
      {"vllm-1", "0", 0, 0, 0, 0, 0, 0, 0, 0, false},
      {"vllm-2", "0", 1, 0.25, 0.375, 100, 50, 2, 1, 0.25, false},
      {"vllm-2", "1", 1, 0.75, 0.375, 100, 50, 1, 1, 0.75, false},
      {"vllm-3", "0", 0.5, 0, 0.125, 100, 50, 0, 1, 0.875, true},
  };
  return options;
}

std::string renderExposition(const VllmModelOptions& options, double elapsed) {
  std::vector<VllmEngineSeries> series;
  std::vector<LabelledPod> pods;
  for (const VllmEngineLoad& load : options.engines) {
    VllmEngineSeries e;
    e.namespaceName = options.namespaceName;
    e.pod = load.pod;
    e.modelName = options.modelName;
    e.engine = load.engine;
    e.oldCacheUsageName = load.oldCacheUsageName;
    e.requestsWaiting = load.waiting;
    e.requestsRunning = load.running;
    e.kvCacheUsage = load.kvCacheUsage;
    const double n = std::round(load.requestsPerSecond * elapsed);
    e.requestSuccess["stop"] = n;
    e.promptTokens = n * load.promptTokensPerRequest;
    e.generationTokens = n * load.generationTokensPerRequest;
    if (n > 0) {
      e.requestQueueTime.observe(load.queueSeconds, n);
      e.timeToFirstToken.observe(load.timeToFirstTokenSeconds, n);
    }
    series.push_back(std::move(e));
    if (pods.empty() || pods.back().name != load.pod) {
      auto it = options.podLabels.find(load.pod);
      pods.push_back({load.pod, it == options.podLabels.end() ? std::map<std::string, std::string>{}
                                                              : it->second});
    }
  }
  return renderVllmSeries(series) +
         renderKubeStateLabels(options.namespaceName, options.namespaceLabels, pods);
}

}  // namespace gpuscale::sim
