#include "gpuscale/sim/kube_state_labels.h"

#include "gpuscale/core/ascii.h"
#include "gpuscale/sim/text_exposition.h"

namespace gpuscale::sim {
namespace {

// kube-state-metrics' sanitised label key: `label_` + the key with [^a-zA-Z0-9_] replaced by `_`.
std::string sanitisedKey(const std::string& key) {
  std::string out = "label_";
  for (char c : key) {
    out += core::isAsciiAlnum(c) ? c : '_';
  }
  return out;
}

ExpositionLabels withLabels(ExpositionLabels labels,
                            const std::map<std::string, std::string>& kubernetes) {
  for (const auto& [key, value] : kubernetes) labels.emplace_back(sanitisedKey(key), value);
  return labels;
}

}  // namespace

std::string renderKubeStateLabels(const std::string& namespaceName,
                                  const std::map<std::string, std::string>& namespaceLabels,
                                  const std::vector<LabelledPod>& pods) {
  constexpr char kHelp[] = "Kubernetes labels converted to Prometheus labels.";
  auto one = [](const auto&) { return 1.0; };
  std::string out = formatFamily(
      "kube_pod_labels", "gauge", kHelp, pods,
      [&](const LabelledPod& pod) {
        return withLabels({{"namespace", namespaceName}, {"pod", pod.name}}, pod.labels);
      },
      one);
  const std::vector<int> theNamespace = {0};
  out += formatFamily(
      "kube_namespace_labels", "gauge", kHelp, theNamespace,
      [&](int) {
        return withLabels({{"namespace", namespaceName}}, namespaceLabels);
      },
      one);
  return out;
}

}  // namespace gpuscale::sim
