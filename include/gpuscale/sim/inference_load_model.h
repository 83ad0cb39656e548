// InferenceLoadModel: the inference load — requests arriving at the Running pods of the
// inference Deployment, a queue per pod, and a service rate set by the partition each pod holds.
// Pure logic: no I/O, no clock; the caller advances it and reads Triton series and model truth.
//
// Arrivals: a Poisson process whose rate follows the scenario's LoadPattern, evaluated at
// `speed` x model time (the load curve is compressed; requests are served in model time). An even
// load balancer (round-robin over the pods sorted by namespace/name) sends each request to one pod;
// with no pod Running the request is lost.
//
// Service: each pod runs one model instance, so it serves its queue one request at a time (FIFO).
// A request has a non-GPU part, `cpuMillis` (half before the GPU part, as compute input, half
// after, as compute output), and a GPU part, `gpuMillisOnFullGpu` / f milliseconds of its device at
// full speed, where f is the device's compute fraction of a whole GPU (1g on an A100: 1/7). One pod
// alone keeps its device busy only `gpuUtilization` (u) of the time, so its GPU part takes gpu / u
// wall time. Pods on the same device (time-slicing) share it: with k of them in their GPU part at
// once the device loses `timeSlicingOverhead` (o) to context switches and each gets min(u, 1 / (k
// (1 + o))) of it. Time-slicing thus adds replicas, not GPU throughput: it helps only while k u
// < 1. Under MPS the clients run side by side without switching and each gets min(u, its active
// thread share, 1 / replicas), busy neighbours or not. Sharing is evaluated per step (kStepSeconds)
// from the pods busy at its start.
//
// Two expositions of the same requests: Triton's (triton_exposition.h) and vLLM's
// (vllm_exposition.h). Triton's counters follow Triton: durations and counts are added when a
// request completes; queue time is arrival to start of service. vLLM's follow its engine, with the
// request shape of `spec.vllm`: a request is waiting from arrival to start of service (queue time)
// and then running (one at a time: the model serves batch 1); its GPU part is prefill (the first
// `prefillShare` of the GPU work; the first token at its end, so time to first token = queue +
// input + prefill) and then decode, one token after another (inter-token latency = decode time /
// (outputTokens - 1); running = start of service to the last token, before the output part); prompt
// tokens count at the first token, generated tokens and the request histograms at completion
// (finished_reason stop). The running request holds its prompt and the tokens generated so far in
// the KV cache (`kvCacheTokens`). A pod that disappears takes its counters with it (a new server
// process starts at 0); its queued requests are lost.
//
// Determinism: the same seed, spec, speed, pod sets and advance() calls give the same results on
// the same standard library; time advances in fixed steps whatever the call granularity.
//
// Thread safety: not thread-safe; the caller serialises access.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpuscale/sim/scenario.h"
#include "gpuscale/sim/triton_exposition.h"
#include "gpuscale/sim/vllm_exposition.h"

namespace gpuscale::sim {

// One Running pod of the Deployment as the model needs it.
struct LoadPod {
  std::string uid;
  std::string namespaceName;
  std::string name;
  std::string device;            // pods with equal `device` share one device
  double computeFraction = 1.0;  // of a whole GPU; > 0
  double mpsThreadFraction = 0;  // MPS: the client's active-thread share; 0: not MPS
};

// Model truth per pod (for the report, not a Triton series).
struct LoadPodTruth {
  std::string namespaceName;
  std::string name;
  std::string device;
  double computeFraction = 1.0;
  int sharersBusy = 0;  // pods of the device with work at the last step
  std::size_t queueLength = 0;
  bool serving = false;
};

struct LoadTotals {
  std::uint64_t arrived = 0;
  std::uint64_t completed = 0;
  std::uint64_t lostNoPod = 0;    // arrived while no pod was Running
  std::uint64_t lostPodGone = 0;  // queued on a pod that disappeared
};

class InferenceLoadModel {
 public:
  static constexpr double kStepSeconds = 0.01;

  // `speed` > 0 compresses the load pattern's clock.
  InferenceLoadModel(LoadSpec spec, std::uint64_t seed, double speed = 1.0);

  // Advances model time by `seconds` (whole steps; the rest carries over) with `pods` Running.
  void advance(double seconds, const std::vector<LoadPod>& pods);

  double seconds() const { return steps_ * kStepSeconds; }
  double patternSeconds() const { return seconds() * speed_; }
  // Requests/s offered at the current pattern time.
  double offeredRps() const;

  std::vector<TritonPodSeries> tritonSeries() const;
  // One engine per pod (engine "0"), the served model name `spec.model`.
  std::vector<VllmEngineSeries> vllmSeries() const;
  std::vector<LoadPodTruth> truth() const;
  const LoadTotals& totals() const { return totals_; }
  // Per device (LoadPod::device): seconds of full-speed device work done since the model started,
  // summed over the pods on it (each pod in its GPU part adds its share of the device per step).
  // Its rate is the device's busy fraction (dcgm's graphics engine activity); kept after the pods
  // leave.
  const std::map<std::string, double>& deviceBusySeconds() const { return deviceBusy_; }

 private:
  struct Request {
    double arrival = 0;
    double start = 0;
    double inputLeft = 0;    // wall seconds
    double prefillLeft = 0;  // device-seconds
    double decodeLeft = 0;   // device-seconds
    double decodeWork = 0;   // device-seconds of decode in all
    double outputLeft = 0;   // wall seconds
    double gpuWall = 0;      // wall seconds spent in the GPU part
    double firstToken = -1;  // when prefill ended
    double lastToken = -1;   // when decode ended
  };
  struct PodState {
    LoadPod pod;
    std::deque<double> queue;  // arrival times
    std::optional<Request> current;
    TritonPodSeries series;
    VllmEngineSeries vllm;
    int sharersBusy = 0;
  };

  void syncPods(const std::vector<LoadPod>& pods);
  void step();
  void serve(PodState& pod, double from, double to, double gpuRate);
  void firstToken(PodState& pod, Request& r, double at);
  void complete(PodState& pod, const Request& r, double at);

  LoadSpec spec_;
  double speed_;
  std::mt19937_64 rng_;
  std::int64_t steps_ = 0;
  double carry_ = 0;
  std::size_t nextPod_ = 0;               // round-robin cursor
  std::map<std::string, PodState> pods_;  // by uid
  std::vector<std::string> order_;        // uids sorted by namespace/name
  LoadTotals totals_;
  std::map<std::string, double> deviceBusy_;
};

}  // namespace gpuscale::sim
