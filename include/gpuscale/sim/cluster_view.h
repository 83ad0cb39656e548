// ClusterView: what the emulator reads of the cluster — Nodes, the GPU Operator's ConfigMaps, Pods.
//
// The informer view keeps caches (watches on nodes, pods, and ConfigMaps of the operator's
// namespace) and calls `onChange` after every event; it reads ConfigMaps through the API, as the
// operator's components read their files when they run. The direct view asks the API on every call,
// so a caller that steps the emulator by hand sees its own writes at once (tests).
//
// Thread safety: both views are thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuscale/kube/client.h"

namespace gpuscale::sim {

class ClusterView {
 public:
  using Ptr = std::shared_ptr<const kube::Object>;
  virtual ~ClusterView() = default;
  virtual Ptr node(const std::string& name) = 0;
  virtual Ptr configMap(const std::string& name) = 0;  // in the operator's namespace
  virtual std::vector<Ptr> pods() = 0;                 // all namespaces
  virtual bool waitForSync(std::chrono::milliseconds timeout) = 0;
};

// configMapSync > 0: ConfigMaps read as the operator's mounted files show them, that long behind
// (config_map_history.h).
std::unique_ptr<ClusterView> makeInformerView(std::shared_ptr<kube::KubeClient> client,
                                              const std::string& operatorNamespace,
                                              std::function<void()> onChange,
                                              std::chrono::milliseconds configMapSync = {});
std::unique_ptr<ClusterView> makeDirectView(std::shared_ptr<kube::KubeClient> client,
                                            const std::string& operatorNamespace);

}  // namespace gpuscale::sim
