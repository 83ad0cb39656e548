// TritonExposition: the one place that formats Triton Inference Server's per-model series
// (reference inference-metrics.md §1.3) in the Prometheus text format, for every exporter of the
// project: the load model on `gpuscale-sim run`'s /metrics, `gpuscale-sim exporter` and the test
// exporter (tests/support/exporter_server.h).
//
// Each pod's series carry `model`, `version`, `namespace` and `pod` labels (what Prometheus keeps
// with `honor_labels`, and what rules/triton.yaml maps to Kubernetes resources). Counters are
// cumulative since the pod (Triton) started; `nv_inference_request_failure` has its four `reason`
// series initialised at 0 as Triton does.
//
// Thread safety: pure functions over values.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/sim/text_exposition.h"

namespace gpuscale::sim {

// The `reason` values of nv_inference_request_failure.
inline constexpr std::string_view kTritonFailureReasons[] = {"REJECTED", "CANCELED", "BACKEND",
                                                             "OTHER"};

// One pod's cumulative per-model counters (durations in µs) and its pending-request gauge.
struct TritonPodSeries {
  std::string namespaceName;
  std::string pod;
  std::string model = "simple";
  std::string version = "1";
  double requestSuccess = 0;
  std::map<std::string, double> requestFailure;  // reason -> count; missing reasons are 0
  double inferenceCount = 0;
  double execCount = 0;
  double requestDurationUs = 0;
  double queueDurationUs = 0;
  double computeInputDurationUs = 0;
  double computeInferDurationUs = 0;
  double computeOutputDurationUs = 0;
  double pendingRequests = 0;  // gauge
};

// The per-model Triton families for `pods` (HELP and TYPE once per family, then one series per
// pod, in the given order).
std::string renderTritonSeries(const std::vector<TritonPodSeries>& pods);

}  // namespace gpuscale::sim
