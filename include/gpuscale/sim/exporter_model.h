// ExporterModel: the shape the demo models of `gpuscale-sim exporter` share. A model holds its
// options (the namespace of its pods and each pod's steady load) and renders, at a time since
// start, the series those pods export followed by kube-state-metrics' label series for them
// (kube_state_labels.h). Each server's model (triton_model.h, vllm_model.h) defines its options,
// derived from ExporterNamespace, and renderExposition(const Options&, double elapsedSeconds)
// beside them, which render() calls.
//
// Thread safety: immutable after construction; render() is const.
#pragma once

#include <map>
#include <string>
#include <utility>

namespace gpuscale::sim {

// The namespace a demo exporter's pods run in, with its Kubernetes labels.
struct ExporterNamespace {
  std::string namespaceName = "default";
  std::map<std::string, std::string> namespaceLabels;
};

template <typename Options>
class ExporterModel {
 public:
  explicit ExporterModel(Options options) : options_(std::move(options)) {}

  // The Prometheus text exposition (format 0.0.4) at `elapsedSeconds` since start.
  std::string render(double elapsedSeconds) const {
    return renderExposition(options_, elapsedSeconds);
  }

 private:
  Options options_;
};

}  // namespace gpuscale::sim
