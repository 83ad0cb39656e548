// ScaleTargetWatch: the live side of workloads an HPA scales through their /scale subresource
// (partition/kube_objects.h: readScalableWorkload): LeaderWorkerSets, custom resources, any kind
// the controller has no informer of its own for.
//
// Each update() reads the HPAs' spec.scaleTargetRef and, per kind they name (group + kind; the
// first apiVersion seen, in HPA order, picks the version), asks discovery once
// (/apis/<group>/<version>, /api/v1 for the core group) for the kind's plural resource and whether
// it serves `<resource>/scale`, then starts an informer on that resource in all namespaces; a kind
// no HPA names any more has its informer stopped and its cache dropped. Each workload's Scale
// (GET <resource>/<name>/scale) is kept in a cache: fetched when the informer adds or changes the
// workload (a Scale is derived from the workload's fields, so it changes only when the workload
// does) and dropped when it is deleted; steady state makes no request at all. A Scale GET that
// fails is tried again on the first update() after `retryAfter`; meanwhile the workload reads as
// having no Scale (the snapshot skips it with reason no_scale, a LeaderWorkerSet excepted).
//
// An HPA whose target kind cannot be read is skipped with a reason (skipped(), reported by the
// controller like an object that does not read: logged and counted once, a Warning Event on the
// HPA, planned as if absent):
//   target_not_served       discovery has no such apiVersion, or no such kind in it
//   target_not_scalable     the kind serves no /scale subresource, or is cluster-scoped
//   target_not_listed       the kind's informer has not listed yet after a failure (RBAC: the
//                           reconciler needs get, list, watch on it)
//   target_discovery_failed discovery could not be read (asked again after `retryAfter`)
// A kind discovery did not find is asked again after `retryAfter` (a CRD installed later).
//
// Thread safety: update(), collect(), skipped() and stop() from one thread (the controller's loop);
// the informers' handlers run on their own threads and only mark workloads changed.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "gpuscale/kube/client.h"
#include "gpuscale/kube/informer.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::reconciler {

using TimePoint = partition::TimePoint;

struct ScaleTargetWatchOptions {
  // "<group>/<Kind>" ("apps/Deployment") of kinds the controller watches itself: never watched
  // here.
  std::set<std::string> ownKinds;
  bool trimCachedObjects = true;  // informers keep only the fields the readers read
  std::chrono::milliseconds retryAfter{60000};
};

// What a kind resolves to through discovery.
struct ScalableKind {
  std::string group, version, kind;
  std::string resource;  // plural
};

// Discovery of `apiVersion` ("group/version", or "v1"): the kind's resource, when it is served,
// namespaced and has a /scale subresource. Errors carry the skip reasons above as their reason
// (NotFound -> target_not_served, Invalid -> target_not_scalable, anything else is the transport's
// status -> target_discovery_failed).
core::Result<ScalableKind> resolveScalableKind(kube::KubeClient& client,
                                               const std::string& apiVersion,
                                               const std::string& kind);

// The same once, for `explain`: appends to `items` (objects with `kind` set) every workload of
// each kind the HPAs among `items` name beside `ownKinds`, and the Scales of the workloads they
// name; returns the HPAs whose target kind cannot be read, as ScaleTargetWatch::skipped() does.
// Errors: a kind that is served but cannot be listed.
core::Result<std::vector<partition::SkippedObject>> listScaleTargets(
    kube::KubeClient& client, const std::set<std::string>& ownKinds, nlohmann::json& items);

class ScaleTargetWatch {
 public:
  struct Stats {
    uint64_t discoveries = 0;  // discovery documents read
    uint64_t scaleGets = 0;    // Scale GETs made
    int informers = 0;         // running now
  };

  // `onChange` is called (from informer threads) when a watched workload changes.
  ScaleTargetWatch(std::shared_ptr<kube::KubeClient> client, ScaleTargetWatchOptions options,
                   std::function<void()> onChange);
  ~ScaleTargetWatch();  // stops

  // Brings the informers in line with the kinds `hpas` (HPA objects as the HPA informer caches
  // them) name, then refreshes the Scales of workloads that changed since the last call.
  void update(const std::vector<kube::ObjectStore::Ptr>& hpas,
              TimePoint now = std::chrono::system_clock::now());
  // Appends the cached workloads (kind as the HPA names it) and their Scales (kind "Scale"),
  // keeping each object alive in `held` for as long as the caller holds it.
  void collect(std::vector<partition::KubeItem>& items,
               std::vector<kube::ObjectStore::Ptr>& held) const;
  // The HPAs of the last update() whose target kind is not read, with why (kind
  // "HorizontalPodAutoscaler").
  const std::vector<partition::SkippedObject>& skipped() const { return skipped_; }
  Stats stats() const;
  void stop();

 private:
  struct KindWatch;
  struct Resolution {
    core::Result<ScalableKind> kind = core::Status::notFound("not resolved yet");
    TimePoint askedAt{};
  };
  // Starts, or keeps, the informer of `groupKind`; nullptr when the kind cannot be watched.
  KindWatch* watchFor(const std::string& groupKind, const std::string& apiVersion,
                      const std::string& kind, TimePoint now, std::string& reason,
                      std::string& why);
  void refreshScales(KindWatch& watch, TimePoint now);

  std::shared_ptr<kube::KubeClient> client_;
  ScaleTargetWatchOptions options_;
  std::function<void()> onChange_;
  std::map<std::string, Resolution> resolved_;                 // "<apiVersion> <Kind>"
  std::map<std::string, std::unique_ptr<KindWatch>> watches_;  // "<group>/<Kind>"
  std::vector<partition::SkippedObject> skipped_;
  uint64_t discoveries_ = 0;
  uint64_t scaleGets_ = 0;
};

}  // namespace gpuscale::reconciler
