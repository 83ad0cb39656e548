// PodGroupController: plays LeaderWorkerSet's controller for a custom resource of LeaderWorkerSet's
// shape (spec.replicas groups of spec.leaderWorkerTemplate.size pods, a scale subresource whose
// selector is status.hpaPodSelector), so tests can scale a workload whose replica is a group of
// pods without LeaderWorkerSet's own controller.
//
// For each object it keeps pods <name>-<group> (the leader, worker-index 0) and
// <name>-<group>-<worker> (workers 1..size-1) for every group below spec.replicas, built from
// spec.leaderWorkerTemplate.workerTemplate (labels and spec) and labelled as LeaderWorkerSet labels
// them (leaderworkerset.sigs.k8s.io/name, group-index, worker-index), owned by the object; it
// deletes the pods of groups at or above spec.replicas, and writes status.replicas and
// status.hpaPodSelector (the leaders) through the status subresource. Unlike LeaderWorkerSet it
// does not recreate a group whose pod failed, and rolls out no template change.
//
// Thread safety: start/stop from one thread; the rest runs on the controller's own threads.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "gpuscale/kube/client.h"
#include "gpuscale/kube/informer.h"

namespace gpuscale::sim {

class PodGroupController {
 public:
  // `collection`: the custom resource in all namespaces.
  PodGroupController(std::shared_ptr<kube::KubeClient> client, kube::ResourceRef collection);
  ~PodGroupController();  // stops

  void start();
  void stop();
  // One pass over the caches (the controller's loop runs it after every change).
  void reconcile();

 private:
  void reconcileGroupSet(const kube::Object& set);

  std::shared_ptr<kube::KubeClient> client_;
  kube::ResourceRef collection_;
  std::unique_ptr<kube::Informer> sets_;
  std::unique_ptr<kube::Informer> pods_;
  std::mutex mu_;
  std::condition_variable_any cv_;
  bool dirty_ = true;
  std::jthread loop_;
};

}  // namespace gpuscale::sim
