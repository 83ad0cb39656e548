#include "gpuscale/sim/triton_model.h"

#include <cmath>

#include "gpuscale/sim/kube_state_labels.h"
#include "gpuscale/sim/triton_exposition.h"

namespace gpuscale::sim {

TritonModelOptions demoTritonModel() {
  TritonModelOptions options;
  options.namespaceLabels = {{"team", "inference"}};
  options.pods = {
      {"triton-0", 10, 400, {{"app", "triton"}, {"tier", "gpu"}}},
      {"triton-1", 0, 0, {{"app", "triton"}, {"tier", "gpu"}}},
      {"triton-2", 4, 4.3, {{"app", "triton"}, {"tier", "cpu"}}},
  };
  return options;
}

std::string renderExposition(const TritonModelOptions& options, double elapsed) {
  std::vector<TritonPodSeries> series;
  for (const TritonPod& pod : options.pods) {
    TritonPodSeries t;
    t.namespaceName = options.namespaceName;
    t.pod = pod.name;
    t.model = options.model;
    t.requestSuccess = t.inferenceCount = t.execCount = std::round(pod.requestsPerSecond * elapsed);
    t.queueDurationUs = std::round(pod.requestsPerSecond * pod.queueMicrosPerRequest * elapsed);
    t.requestDurationUs = t.queueDurationUs;
    series.push_back(std::move(t));
  }
  std::vector<LabelledPod> labelled;
  for (const TritonPod& pod : options.pods) labelled.push_back({pod.name, pod.labels});
  return renderTritonSeries(series) +
         renderKubeStateLabels(options.namespaceName, options.namespaceLabels, labelled);
}

}  // namespace gpuscale::sim
