// DcgmPodDelay: when dcgm-exporter's series start naming a pod. The exporter reads the kubelet's
// pod-resources view at each collection (every 30 s by default), and Prometheus sees the labels a
// scrape later, so a pod that just got its device is missing from the series for a while: its
// device reads as held by no pod. A scenario sets the delay (gpuOperator.dcgmExporter
// .podDelaySeconds, default 0: named from the first scrape) to reproduce that race for the
// reconciler's per-GPU mapping.
//
// Thread safety: thread-safe (scrapes may be served concurrently).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gpuscale/sim/pod_devices.h"

namespace gpuscale::sim {

class DcgmPodDelay {
 public:
  using Clock = std::chrono::steady_clock;
  explicit DcgmPodDelay(std::chrono::milliseconds delay) : delay_(delay) {}

  // `nodes` without the pods that have held their device for less than the delay at `now` (by
  // pod uid and device, so a pod moved to another device waits again). Forgets pods that are gone.
  std::vector<NodeGpuView> apply(std::vector<NodeGpuView> nodes, Clock::time_point now);

 private:
  std::chrono::milliseconds delay_;
  std::mutex mu_;
  std::map<std::string, Clock::time_point> firstSeen_;  // uid + "|" + device
};

}  // namespace gpuscale::sim
