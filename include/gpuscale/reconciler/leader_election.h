// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it, so
// several reconciler replicas can run and only one acts.
//
// tryAcquireOrRenew(now): reads the Lease; creates it when missing; renews it when we hold it;
// takes it over when the holder has not renewed for leaseDuration as observed by THIS process's
// clock (the time we last saw the record change, never the holder's timestamps: clocks may
// disagree) or released it (empty holder). Every write carries the read resourceVersion, so two
// candidates racing for an expired lease cannot both win (the loser gets 409 and stays a follower).
// release(): gives the lease up (empty holder, 1 s duration) so a successor need not wait.
//
// run(): a thread that tries every retryPeriod; a leader that cannot renew within renewDeadline
// stops leading (onStoppedLeading) — the caller must then stop acting (the reconciler exits).
// A Lease that cannot be read or written (kube-apiserver away) is logged once until it can again,
// and counted as gpuscale_reconciler_degraded_total{what="lease"} (degraded_log.h).
//
// Thread safety: isLeader() from any thread; the rest from the owning thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "gpuscale/kube/client.h"
#include "gpuscale/reconciler/degraded_log.h"

namespace gpuscale::reconciler {

struct LeaderElectionOptions {
  std::string ns = "default";
  std::string name = "gpuscale-reconciler";
  std::string identity;
  std::chrono::seconds leaseDuration{15};
  std::chrono::seconds renewDeadline{10};
  std::chrono::seconds retryPeriod{2};
};

class LeaderElector {
 public:
  using Clock = std::chrono::steady_clock;
  LeaderElector(std::shared_ptr<kube::KubeClient> client, LeaderElectionOptions options,
                std::shared_ptr<ReconcilerMetrics> metrics = nullptr);
  ~LeaderElector();

  // One attempt; returns whether we hold the lease afterwards. `now` is this process's clock and
  // `wall` the time written into the Lease (acquireTime/renewTime).
  bool tryAcquireOrRenew(Clock::time_point now, std::chrono::system_clock::time_point wall =
                                                    std::chrono::system_clock::now());
  // Gives the lease up if we hold it.
  void release();
  bool isLeader() const { return leader_.load(); }
  const std::string& identity() const { return options_.identity; }

  void run(std::function<void()> onStartedLeading, std::function<void()> onStoppedLeading);
  void stop();

 private:
  kube::ResourceRef leaseRef() const;

  std::shared_ptr<kube::KubeClient> client_;
  LeaderElectionOptions options_;
  DegradedLog degraded_;
  std::atomic<bool> leader_{false};
  std::string observedRecord_;  // holder + renewTime + resourceVersion last seen
  Clock::time_point observedAt_{};
  Clock::time_point lastRenew_{};
  std::jthread thread_;
};

}  // namespace gpuscale::reconciler
