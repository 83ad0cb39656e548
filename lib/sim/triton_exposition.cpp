#include "gpuscale/sim/triton_exposition.h"

#include <functional>

#include <fmt/format.h>

namespace gpuscale::sim {
namespace {

struct TritonFamily {
  std::string_view name;
  std::string_view type;
  std::string_view help;
  std::function<double(const TritonPodSeries&)> value;
};

// HELP texts as Triton prints them.
const std::vector<TritonFamily>& tritonFamilies() {
  static const std::vector<TritonFamily> kFamilies = {
      {"nv_inference_request_success", "counter",
       "Number of successful inference requests, all batch sizes",
       [](const TritonPodSeries& p) { return p.requestSuccess; }},
      {"nv_inference_count", "counter",
       "Number of inferences performed (does not include cached requests)",
       [](const TritonPodSeries& p) { return p.inferenceCount; }},
      {"nv_inference_exec_count", "counter",
       "Number of model executions performed (does not include cached requests)",
       [](const TritonPodSeries& p) { return p.execCount; }},
      {"nv_inference_request_duration_us", "counter",
       "Cumulative inference request duration in microseconds (includes cached requests)",
       [](const TritonPodSeries& p) { return p.requestDurationUs; }},
      {"nv_inference_queue_duration_us", "counter",
       "Cumulative inference queuing duration in microseconds (includes cached requests)",
       [](const TritonPodSeries& p) { return p.queueDurationUs; }},
      {"nv_inference_compute_input_duration_us", "counter",
       "Cumulative compute input duration in microseconds (does not include cached requests)",
       [](const TritonPodSeries& p) { return p.computeInputDurationUs; }},
      {"nv_inference_compute_infer_duration_us", "counter",
       "Cumulative compute inference duration in microseconds (does not include cached requests)",
       [](const TritonPodSeries& p) { return p.computeInferDurationUs; }},
      {"nv_inference_compute_output_duration_us", "counter",
       "Cumulative inference compute output duration in microseconds (does not include cached "
       "requests)",
       [](const TritonPodSeries& p) { return p.computeOutputDurationUs; }},
      {"nv_inference_pending_request_count", "gauge",
       "Instantaneous number of pending requests awaiting execution per-model.",
       [](const TritonPodSeries& p) { return p.pendingRequests; }},
  };
  return kFamilies;
}

ExpositionLabels podLabels(const TritonPodSeries& pod) {
  return {{"model", pod.model},
          {"namespace", pod.namespaceName},
          {"pod", pod.pod},
          {"version", pod.version}};
}

}  // namespace

std::string renderTritonSeries(const std::vector<TritonPodSeries>& pods) {
  std::string out;
  if (pods.empty()) return out;
  out += formatFamilyPerValue(
      "nv_inference_request_failure", "counter",
      "Number of failed inference requests, all batch sizes", pods, podLabels, "reason",
      kTritonFailureReasons,
      [](const TritonPodSeries& p) -> const auto& { return p.requestFailure; });
  for (const TritonFamily& family : tritonFamilies()) {
    out += formatFamily(family.name, family.type, family.help, pods, podLabels, family.value);
  }
  return out;
}

}  // namespace gpuscale::sim
