#include "triton_model.h"

#include <fmt/format.h>

namespace gpuscale::sim {
namespace {

// Label values in the exposition format: backslash, double quote and newline escaped.
std::string escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string sanitisedKey(const std::string& key) {
  std::string out = "label_";
  for (char c : key) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += keep ? c : '_';
  }
  return out;
}

std::string labelSet(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ',';
    out += labels[i].first + "=\"" + escape(labels[i].second) + "\"";
  }
  return out + "}";
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
  std::string out;
  auto family = [&](std::string_view name, std::string_view type, std::string_view help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  auto podLabels = [&](const TritonPod& pod) {
    return labelSet({{"model", options_.model},
                     {"namespace", options_.namespaceName},
                     {"pod", pod.name},
                     {"version", "1"}});
  };
  family("nv_inference_request_success", "counter",
         "Number of successful inference requests, all batch sizes");
  for (const TritonPod& pod : options_.pods) {
    out += fmt::format("nv_inference_request_success{} {:.0f}\n", podLabels(pod),
                       pod.requestsPerSecond * elapsed);
  }
  family("nv_inference_queue_duration_us", "counter",
         "Cumulative inference queuing duration in microseconds");
  for (const TritonPod& pod : options_.pods) {
    out += fmt::format("nv_inference_queue_duration_us{} {:.0f}\n", podLabels(pod),
                       pod.requestsPerSecond * pod.queueMicrosPerRequest * elapsed);
  }
  family("kube_pod_labels", "gauge", "Kubernetes labels converted to Prometheus labels.");
  for (const TritonPod& pod : options_.pods) {
    std::vector<std::pair<std::string, std::string>> labels = {
        {"namespace", options_.namespaceName}, {"pod", pod.name}};
    for (const auto& [key, value] : pod.labels) labels.emplace_back(sanitisedKey(key), value);
    out += "kube_pod_labels" + labelSet(labels) + " 1\n";
  }
  family("kube_namespace_labels", "gauge", "Kubernetes labels converted to Prometheus labels.");
  std::vector<std::pair<std::string, std::string>> nsLabels = {
      {"namespace", options_.namespaceName}};
  for (const auto& [key, value] : options_.namespaceLabels) {
    nsLabels.emplace_back(sanitisedKey(key), value);
  }
  out += "kube_namespace_labels" + labelSet(nsLabels) + " 1\n";
  return out;
}

}  // namespace gpuscale::sim
