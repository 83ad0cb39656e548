#include "gpuscale/sim/dcgm_pod_delay.h"

#include <algorithm>

namespace gpuscale::sim {

std::vector<NodeGpuView> DcgmPodDelay::apply(std::vector<NodeGpuView> nodes,
                                             Clock::time_point now) {
  if (delay_.count() <= 0) return nodes;
  std::lock_guard lock(mu_);
  std::map<std::string, Clock::time_point> seen;
  for (NodeGpuView& node : nodes) {
    std::erase_if(node.pods, [&](const PodDevice& pod) {
      const std::string key = pod.uid + "|" + pod.device;
      auto it = firstSeen_.find(key);
      const Clock::time_point since = it == firstSeen_.end() ? now : it->second;
      seen.emplace(key, since);
      return now - since < delay_;
    });
  }
  firstSeen_ = std::move(seen);
  return nodes;
}

}  // namespace gpuscale::sim
