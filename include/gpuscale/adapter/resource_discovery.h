// ResourceDiscovery: the in-cluster ResourceMapper, built from the cluster's API discovery
// (kube::DiscoveryResourceMapper) and kept current, so rules and requests can name any resource
// the cluster serves: CRDs included, and those installed or removed while the adapter runs.
//
// create() reads discovery once. When that fails the mapper starts from the built-in table
// (k8s::BuiltinResourceTable) so the adapter can serve the common resources; the next successful
// refresh replaces it. start() refreshes every `interval` on a background thread and, after a
// refresh that changed what the mapper knows, calls `onChange` on that thread (the adapter
// recompiles its rules there: compiled rules resolve their overrides and label-template labels
// when they are compiled).
//
// Degraded mode: a refresh that fails keeps the last good table. The first failure of a run of
// failures is logged as a warning, the rest only at debug level; the recovery is logged once.
//
// `/metrics` (on the given registry):
//   gpuscale_api_discovery_refreshes_total{result="success"|"failure"}  counter
//   gpuscale_api_discovery_degraded     gauge: 1 while the last refresh failed
//   gpuscale_api_discovery_changes_total counter: refreshes that changed the table
//   gpuscale_api_discovery_resources     gauge: resources the mapper knows
//
// Thread safety: mapper() and refreshOnce() from any thread (refreshOnce() calls are serialised);
// start()/stop() from one controlling thread. The mapper outlives every rule set compiled against
// it as long as this object does.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "gpuscale/core/duration.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/kube/discovery.h"

namespace gpuscale::adapter {

class ResourceDiscovery {
 public:
  ResourceDiscovery(std::shared_ptr<kube::KubeClient> client,
                    std::shared_ptr<prometheus::Registry> registry);
  ~ResourceDiscovery();
  ResourceDiscovery(const ResourceDiscovery&) = delete;
  ResourceDiscovery& operator=(const ResourceDiscovery&) = delete;

  const k8s::ResourceMapper& mapper() const { return mapper_; }

  // Reads discovery now, with the bookkeeping above. True when the table changed.
  bool refreshOnce();

  // Refreshes every `interval` (> 0) until stop(); `onChange` may be empty.
  void start(core::Duration interval, std::function<void()> onChange);
  void stop();

 private:
  kube::DiscoveryResourceMapper mapper_;
  std::mutex refreshMu_;
  bool degraded_ = false;  // guarded by refreshMu_
  std::jthread refresher_;
  prometheus::Counter* successes_ = nullptr;
  prometheus::Counter* failures_ = nullptr;
  prometheus::Counter* changes_ = nullptr;
  prometheus::Gauge* degradedGauge_ = nullptr;
  prometheus::Gauge* resources_ = nullptr;
};

}  // namespace gpuscale::adapter
