// GpuAllocation: which GPUs of a node hold pods, as the device plugin assigns devices at admission.
//
// Kubernetes only knows that a pod holds "one nvidia.com/mig-1g.5gb"; the device plugin picks the
// device. The emulator needs the GPU to decide whether mig-manager may rebuild it. A pod keeps the
// GPUs it was given while it lives; a new pod takes free units first-fit by GPU index, or the GPU
// named by its annotation `gpuscale.io/sim-gpu` (how a scenario or test pins a pod). A pod whose
// request fits no GPU (e.g. it was bound while the node advertised another geometry) counts as
// holding every GPU of the node: the safe answer when the device is unknown.
//
// Thread safety: not thread-safe; owned by the emulator under its lock.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuscale/kube/client.h"
#include "gpuscale/sim/node_advertisement.h"

namespace gpuscale::sim {

struct PodGpuClaim {
  std::string uid;
  ResourceCounts requests;       // nvidia.com/* per pod
  std::optional<int> pinnedGpu;  // from the annotation
  std::string container;         // the first container that requests nvidia.com/* resources
};

// The claim of `pod` if it is bound to `nodeName`, not finished (Succeeded/Failed) and requests
// nvidia.com/* resources; nullopt otherwise.
std::optional<PodGpuClaim> podGpuClaim(const kube::Object& pod, std::string_view nodeName);

class GpuAllocation {
 public:
  // `pods`: every live claim on the node; `unitsPerGpu[i]`: what GPU i offers (node_advertisement.h
  // unitsOfGpu). Pods no longer listed release their GPUs.
  void update(const std::vector<PodGpuClaim>& pods, const std::vector<ResourceCounts>& unitsPerGpu);
  std::set<int> busyGpus() const;
  // GPUs the pod with `uid` holds (empty when unknown).
  std::set<int> gpusOf(const std::string& uid) const;

 private:
  std::map<std::string, std::set<int>> byPod_;
};

}  // namespace gpuscale::sim
