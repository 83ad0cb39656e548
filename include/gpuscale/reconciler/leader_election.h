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
// Leadership is a deadline, not a flag: isLeader() is true only while this process's clock
// (LeaderElectionOptions::now) is within renewDeadline of the start of the last successful
// acquire or renew. So a leader whose renew loop stalls (a blocked thread, a hung request, a
// paused process) stops counting as leader on its own, before any other candidate can take the
// Lease over (they wait leaseDuration > renewDeadline from when they saw the record last change,
// which is after the renewal was sent; this holds while the clocks run at about the same rate).
// Seeing another holder in the Lease ends leadership at once. Writes to the cluster are fenced on
// isLeader() right before they go out (fenced_client.h).
//
// run(): a thread that tries every retryPeriod; a leader that cannot renew within renewDeadline
// stops leading (onStoppedLeading) — the caller must then stop acting (the reconciler exits).
// The client should be one for the Lease alone (its own rate limiter): renewals must not queue
// behind the controller's list and write traffic.
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
  // This process's clock for deadlines (tests substitute their own; it must be thread-safe).
  std::function<std::chrono::steady_clock::time_point()> now = std::chrono::steady_clock::now;
};

class LeaderElector {
 public:
  using Clock = std::chrono::steady_clock;
  LeaderElector(std::shared_ptr<kube::KubeClient> client, LeaderElectionOptions options,
                std::shared_ptr<ReconcilerMetrics> metrics = nullptr);
  ~LeaderElector();

  // One attempt; returns whether we hold the lease afterwards. `now` is this process's clock (taken
  // before the attempt: a renewal counts from when it was sent) and `wall` the time written into
  // the Lease (acquireTime/renewTime).
  bool tryAcquireOrRenew(Clock::time_point now, std::chrono::system_clock::time_point wall =
                                                    std::chrono::system_clock::now());
  // Gives the lease up if we hold it.
  void release();
  // True while we hold the lease and options.now() is within renewDeadline of the last successful
  // acquire or renew. Thread-safe; cheap enough to call before every write.
  bool isLeader() const;
  // How long isLeader() stays true without another renewal (zero or less: not the leader). The
  // Lease's write fence (lease_fence.h) is open that long. Thread-safe.
  Clock::duration leadershipLeft() const;
  const std::string& identity() const { return options_.identity; }

  void run(std::function<void()> onStartedLeading, std::function<void()> onStoppedLeading);
  void stop();

 private:
  kube::ResourceRef leaseRef() const;
  bool withinRenewDeadline(Clock::time_point now) const;
  void renewed(Clock::time_point now);

  std::shared_ptr<kube::KubeClient> client_;
  LeaderElectionOptions options_;
  DegradedLog degraded_;
  std::atomic<bool> leader_{false};
  std::string observedRecord_;  // holder + renewTime + resourceVersion last seen
  Clock::time_point observedAt_{};
  std::atomic<Clock::rep> lastRenew_{0};  // ticks since Clock's epoch, read by isLeader()
  std::jthread thread_;
};

}  // namespace gpuscale::reconciler
