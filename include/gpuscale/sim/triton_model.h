// TritonModel: the series a Triton Inference Server pod exports, generated from a steady load per
// pod, plus kube-state-metrics' label series for those pods (what standalone mode evaluates
// labelSelectors against). The first building block of the GPU emulator; `gpuscale-sim exporter`
// serves it.
//
// The Triton families are formatted by triton_exposition.h (shared with the load model of
// `gpuscale-sim run`). Each pod has a request rate (requests/s) and a mean queue time (µs per
// request). The cumulative counters at `elapsed` seconds since start are
// `nv_inference_request_success = rate × elapsed` and `nv_inference_queue_duration_us = rate ×
// queue × elapsed`, so the Triton rule's delta(queue)/(1 + delta(success)) over a window of w
// seconds reads rate·queue·w / (1 + rate·w).
//
// Thread safety: immutable after construction; render() is const (exporter_model.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuscale/sim/exporter_model.h"

namespace gpuscale::sim {

struct TritonPod {
  std::string name;
  double requestsPerSecond = 0;
  double queueMicrosPerRequest = 0;
  std::map<std::string, std::string> labels;  // the pod's Kubernetes labels
};

struct TritonModelOptions : ExporterNamespace {
  std::string model = "simple";
  std::vector<TritonPod> pods;
};

// Three pods: a busy one, an idle one and a lightly loaded one.
TritonModelOptions demoTritonModel();

// The series of `options`' pods at `elapsedSeconds` since start (TritonModel::render()).
std::string renderExposition(const TritonModelOptions& options, double elapsedSeconds);

using TritonModel = ExporterModel<TritonModelOptions>;

}  // namespace gpuscale::sim
