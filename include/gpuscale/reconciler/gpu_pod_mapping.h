// Which GPUs of a node hold running pods. The Kubernetes API does not say which GPU a pod got, so
// the default answer is "unknown", and the reconciler then treats every GPU of a node with a
// running GPU pod as busy. A Prometheus-backed implementation would read dcgm-exporter series
// (labels `gpu`/`UUID`, `GPU_I_ID`, `pod`, `namespace`) and answer per GPU; none is wired in yet.
//
// Thread safety: implementations are thread-safe.
#pragma once

#include <optional>
#include <set>
#include <string>

namespace gpuscale::reconciler {

class GpuPodMapping {
 public:
  virtual ~GpuPodMapping() = default;
  // GPU indices of `node` that hold a pod, or nullopt when the mapping is unknown.
  virtual std::optional<std::set<int>> busyGpus(const std::string& node) = 0;
};

// The node-level rule: the mapping is never known.
class NodeLevelGpuPodMapping final : public GpuPodMapping {
 public:
  std::optional<std::set<int>> busyGpus(const std::string&) override { return std::nullopt; }
};

}  // namespace gpuscale::reconciler
