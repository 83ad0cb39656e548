// GpuMemoryNeed: how much of each GPU device (a whole GPU, a MIG instance) one pod of a workload
// takes, so a sharing lever (time-slicing, MPS) never puts more pods on a device than its memory
// holds.
//
// Why it matters: an inference server that preallocates a share of its device fails at start-up
// when that share is not free. vLLM takes `--gpu-memory-utilization` (a fraction of the device's
// total memory, default 0.9) for weights, activations and its KV cache, and refuses to start when
// less than that is free; memory held by other processes on the device does not shrink its budget.
// Two vLLM pods at the default therefore never share one device, two at 0.45 do, three do not.
//
// Where the need comes from, per pod template (or pod):
//   1. the annotations (of the pod template's metadata):
//        gpuscale.io/gpu-memory: "<quantity>"         bytes per device, e.g. "18Gi"
//        gpuscale.io/gpu-memory-fraction: "<0..1]"    share of each device, e.g. "0.45"
//      either one overrides what the arguments say; a malformed value makes the need unknown.
//   2. a vLLM container (one that asks for an nvidia.com/ resource and whose image or command names
//      vLLM: `vllm serve`, `python -m vllm.entrypoints.openai.api_server`, the vllm/vllm-openai
//      image): `--gpu-memory-utilization X` (or `=X`, or the underscore spelling vLLM's parser also
//      accepts) in its command or arguments, also inside a shell string (`sh -c "vllm serve ..."`);
//      without the flag vLLM's default 0.9; unknown when the value is not a number in (0, 1]
//      (`$(UTIL)`, say) or when the flag is absent but `--config` may set it.
//   3. otherwise none: the workload says nothing, and only the policy's perPodGpuMemory bounds it.
// A pod with several GPU containers needs the largest of theirs (each has devices of its own, and
// the worst one bounds the sharing).
//
// The replicas per device a need allows: a fraction f allows floor(1 / f) pods per device (time-
// slicing shares the memory of one device among its replicas; MPS gives each of R clients 1 / R of
// it); bytes b allow floor(device memory / b), unknown device memory allowing none; an unknown need
// allows none (the lever is refused rather than guessed). `kNoMemoryBound` when there is no need.
//
// Thread safety: values and pure functions.
#pragma once

#include <climits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale::partition {

inline constexpr std::string_view kGpuMemoryAnnotation = "gpuscale.io/gpu-memory";
inline constexpr std::string_view kGpuMemoryFractionAnnotation = "gpuscale.io/gpu-memory-fraction";
inline constexpr double kVllmDefaultGpuMemoryUtilization = 0.9;
inline constexpr int kNoMemoryBound = INT_MAX;

struct GpuMemoryNeed {
  enum class Kind { kNone, kFraction, kBytes, kUnknown };
  Kind kind = Kind::kNone;
  double value = 0;    // the fraction (0, 1] or the bytes, per device
  std::string source;  // where it comes from, or why it is unknown: a phrase for messages
  friend bool operator==(const GpuMemoryNeed&, const GpuMemoryNeed&) = default;
};

// What the need reader looks at in one container of a pod spec.
struct ContainerCommandLine {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  bool usesGpu = false;  // asks for an nvidia.com/ resource
};

// The need of a pod with these containers and pod annotations (rules above).
GpuMemoryNeed gpuMemoryNeed(const std::vector<ContainerCommandLine>& containers,
                            const std::map<std::string, std::string>& annotations);

// Pods per device `need` allows (rules above); `deviceBytes`: the memory of one device, when known.
int replicasForMemory(const GpuMemoryNeed& need, std::optional<double> deviceBytes);

// The sentence for the reason a lever stops at `replicas` because of `need` ("vLLM preallocates
// 0.9 of each device (its default --gpu-memory-utilization, container \"vllm\"): 1 pod per
// device").
std::string describeMemoryBound(const GpuMemoryNeed& need, int replicas);

}  // namespace gpuscale::partition
