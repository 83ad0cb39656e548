// KubeStateLabels: kube-state-metrics' label series for the pods of a demo exporter
// (`kube_pod_labels`, `kube_namespace_labels`, value 1, each Kubernetes label as `label_<key>` with
// every character outside [a-zA-Z0-9_] replaced by `_`): what the adapter's standalone mode
// evaluates labelSelectors against. Shared by the Triton and vLLM demo models (triton_model.h,
// vllm_model.h).
//
// Thread safety: pure functions over values.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpuscale::sim {

struct LabelledPod {
  std::string name;
  std::map<std::string, std::string> labels;  // the pod's Kubernetes labels
};

// `kube_pod_labels` for `pods` and `kube_namespace_labels` for the namespace, with their headers.
std::string renderKubeStateLabels(const std::string& namespaceName,
                                  const std::map<std::string, std::string>& namespaceLabels,
                                  const std::vector<LabelledPod>& pods);

}  // namespace gpuscale::sim
