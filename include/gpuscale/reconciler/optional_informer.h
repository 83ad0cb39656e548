// OptionalInformer: an informer on a collection the cluster may not serve, so the controller plans
// on its objects when they are there and plans without them when they are not, instead of waiting
// for a LIST that can never succeed. What it is for: the DRA kinds (resource.k8s.io/v1: GA in 1.34,
// absent on older clusters and where the API is turned off), a CRD that may not be installed, a
// scale target kind whose API may go away.
//
// Whether the collection is served is decided by discovery (GET /api/v1 or /apis/<group>/<version>
// and the resource named in it): when start() is called, then every `recheckPeriod` while it is not
// served, and at once when the running informer's LIST or WATCH fails (a resource removed, RBAC
// that does not grant it). A discovery that says the collection is gone stops the informer and
// drops its objects. The states:
//   kDiscovering  not yet known (before the first discovery answered): not ready.
//   kStarting     served; the informer's first LIST has not completed or failed yet: not ready
//                 (the controller waits for it, as for its required informers).
//   kServed       served and synced: its objects are objects().
//   kAbsent       not served (404, or the group version does not name the resource): no
//                 informer runs; ready, with no objects.
//   kUnreadable   served, but the informer failed before it ever synced (403 Forbidden, a
//                 server error): ready, with no objects; the informer keeps retrying with its
//                 backoff and its objects count once it syncs.
//   kUnknown      discovery itself failed (transport, 5xx) and no informer runs: ready, with no
//                 objects, rechecked after `recheckPeriod`.
// Planning without the collection is what a cluster that does not serve it needs; where it is
// served but unreadable, the pass plans as if the objects did not exist (a workload that needs them
// is explained, not acted on: partition/dra_snapshot.h). Each change into a degraded state
// (kAbsent, kUnreadable, kUnknown) is logged once and counted in
// gpuscale_reconciler_degraded_total{what="optional_resource_<state>"} (degraded_log.h); the gauge
// gpuscale_reconciler_optional_resource_served{resource} is 1 while objects() holds the
// collection and 0 while it is planned without; each change calls `onChange` (the controller
// starts a pass).
//
// Thread safety: start()/stop() from one thread; everything else from any thread. Handlers and
// onChange run on the informer's or the monitor's thread and must not block for long.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gpuscale/kube/client.h"
#include "gpuscale/kube/informer.h"
#include "gpuscale/reconciler/degraded_log.h"
#include "gpuscale/reconciler/reconciler_metrics.h"

namespace gpuscale::reconciler {

enum class OptionalResourceState {
  kDiscovering,
  kStarting,
  kServed,
  kAbsent,
  kUnreadable,
  kUnknown
};
// "discovering" | "starting" | "served" | "absent" | "unreadable" | "unknown".
std::string_view optionalResourceStateName(OptionalResourceState state);

struct OptionalInformerOptions {
  std::string kind;  // as kube_objects.h names kinds: what objects() are read as
  kube::InformerOptions informer;
  kube::InformerHandler handler;  // added to each informer started
  std::chrono::milliseconds recheckPeriod{60000};
  // How often the running informer's failure count is looked at (no API call).
  std::chrono::milliseconds failurePoll{1000};
  std::function<void()> onChange;  // the state changed; may be null
};

// Whether discovery document `document` (an APIResourceList) names `resource`.
bool discoveryNames(const kube::Object& document, std::string_view resource);

class OptionalInformer {
 public:
  OptionalInformer(std::shared_ptr<kube::KubeClient> client, OptionalInformerOptions options,
                   std::shared_ptr<ReconcilerMetrics> metrics = nullptr);
  ~OptionalInformer();  // stops

  void start();
  void stop();

  const std::string& kind() const { return options_.kind; }
  // "<resource>.<group>" ("resourceslices.resource.k8s.io"; "pods" for the core group).
  const std::string& resourceName() const { return resourceName_; }
  OptionalResourceState state() const;
  // Whether a pass may run on objects(): not while discovery has not answered or the informer's
  // first LIST is still running.
  bool ready() const;
  // The cached objects while the informer has synced; empty otherwise. Each pointer keeps its
  // object alive however the cache changes.
  std::vector<kube::ObjectStore::Ptr> objects() const;

 private:
  void run(std::stop_token stop);
  // Asks discovery and moves to the state it implies (starting or stopping the informer).
  void recheck();
  void setState(OptionalResourceState state, const std::string& why);
  std::shared_ptr<kube::Informer> informer() const;

  std::shared_ptr<kube::KubeClient> client_;
  OptionalInformerOptions options_;
  std::shared_ptr<ReconcilerMetrics> metrics_;
  DegradedLog degraded_;
  std::string resourceName_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  OptionalResourceState state_ = OptionalResourceState::kDiscovering;
  std::shared_ptr<kube::Informer> informer_;
  uint64_t seenFailures_ = 0;  // monitor thread only
  std::jthread monitor_;
};

}  // namespace gpuscale::reconciler
