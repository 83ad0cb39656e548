#include "gpuscale/sim/triton_model.h"

#include <cmath>

#include "gpuscale/sim/triton_exposition.h"

namespace gpuscale::sim {
namespace {

// kube-state-metrics' sanitised label key: `label_` + the key with [^a-zA-Z0-9_] replaced by `_`.
std::string sanitisedKey(const std::string& key) {
  std::string out = "label_";
  for (char c : key) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += keep ? c : '_';
  }
  return out;
}

}  // namespace

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

std::string TritonModel::render(double elapsed) const {
  std::vector<TritonPodSeries> series;
  for (const TritonPod& pod : options_.pods) {
    TritonPodSeries t;
    t.namespaceName = options_.namespaceName;
    t.pod = pod.name;
    t.model = options_.model;
    t.requestSuccess = t.inferenceCount = t.execCount = std::round(pod.requestsPerSecond * elapsed);
    t.queueDurationUs = std::round(pod.requestsPerSecond * pod.queueMicrosPerRequest * elapsed);
    t.requestDurationUs = t.queueDurationUs;
    series.push_back(std::move(t));
  }
  std::string out = renderTritonSeries(series);
  out += formatFamilyHeader("kube_pod_labels", "gauge",
                            "Kubernetes labels converted to Prometheus labels.");
  for (const TritonPod& pod : options_.pods) {
    std::vector<std::pair<std::string, std::string>> labels = {
        {"namespace", options_.namespaceName}, {"pod", pod.name}};
    for (const auto& [key, value] : pod.labels) labels.emplace_back(sanitisedKey(key), value);
    out += "kube_pod_labels" + formatLabelSet(labels) + " 1\n";
  }
  out += formatFamilyHeader("kube_namespace_labels", "gauge",
                            "Kubernetes labels converted to Prometheus labels.");
  std::vector<std::pair<std::string, std::string>> nsLabels = {
      {"namespace", options_.namespaceName}};
  for (const auto& [key, value] : options_.namespaceLabels) {
    nsLabels.emplace_back(sanitisedKey(key), value);
  }
  out += "kube_namespace_labels" + formatLabelSet(nsLabels) + " 1\n";
  return out;
}

}  // namespace gpuscale::sim
