#include "gpuscale/reconciler/leader_election.h"

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/kube_objects.h"

#include <condition_variable>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace gpuscale::reconciler {
namespace {

using nlohmann::json;

// metav1.MicroTime as the API server writes it.
std::string microTime(std::chrono::system_clock::time_point t) {
  return core::formatRfc3339Micro(t);
}

}  // namespace

LeaderElector::LeaderElector(std::shared_ptr<kube::KubeClient> client,
                             LeaderElectionOptions options,
                             std::shared_ptr<ReconcilerMetrics> metrics)
    : client_(std::move(client)), options_(std::move(options)), degraded_(std::move(metrics)) {}

LeaderElector::~LeaderElector() { stop(); }

bool LeaderElector::withinRenewDeadline(Clock::time_point now) const {
  const Clock::time_point last{Clock::duration(lastRenew_.load())};
  return now - last < options_.renewDeadline;
}

void LeaderElector::renewed(Clock::time_point now) {
  lastRenew_.store(now.time_since_epoch().count());
  leader_.store(true);
}

bool LeaderElector::isLeader() const { return leadershipLeft() > Clock::duration::zero(); }

LeaderElector::Clock::duration LeaderElector::leadershipLeft() const {
  if (!leader_.load()) return Clock::duration::zero();
  const Clock::time_point last{Clock::duration(lastRenew_.load())};
  return last + options_.renewDeadline - options_.now();
}

kube::ResourceRef LeaderElector::leaseRef() const {
  return kube::ResourceRef::collection("coordination.k8s.io", "v1", "leases", options_.ns)
      .named(options_.name);
}

bool LeaderElector::tryAcquireOrRenew(Clock::time_point now,
                                      std::chrono::system_clock::time_point wall) {
  const std::string stamp = microTime(wall);
  const int duration = static_cast<int>(options_.leaseDuration.count());
  auto current = client_->get(leaseRef());
  if (!current) {
    if (!k8s::isNotFound(current.status())) {
      degraded_.failed("lease", leaseRef().path() + " (read)",
                       "leader election: reading the lease failed: " + current.status().message());
      if (!withinRenewDeadline(now)) leader_.store(false);
      return leader_.load();
    }
    json lease{{"apiVersion", "coordination.k8s.io/v1"},
               {"kind", "Lease"},
               {"metadata", {{"name", options_.name}, {"namespace", options_.ns}}},
               {"spec",
                {{"holderIdentity", options_.identity},
                 {"leaseDurationSeconds", duration},
                 {"acquireTime", stamp},
                 {"renewTime", stamp},
                 {"leaseTransitions", 0}}}};
    auto created = client_->create(leaseRef().named(""), lease);
    if (created) {
      renewed(now);
    } else {
      leader_.store(false);
    }
    return leader_.load();
  }
  auto lease = partition::readLease(*current);
  if (!lease) {
    degraded_.failed("lease", leaseRef().path() + " (read)",
                     "leader election: the lease does not read: " + lease.status().message());
    if (!withinRenewDeadline(now)) leader_.store(false);
    return leader_.load();
  }
  degraded_.cleared("lease", leaseRef().path() + " (read)");
  const std::string& holder = lease->holderIdentity;
  const std::string record = holder + "|" + lease->renewTime + "|" + lease->meta.resourceVersion;
  if (record != observedRecord_) {
    observedRecord_ = record;
    observedAt_ = now;
  }
  const int observedDuration = lease->leaseDurationSeconds.value_or(duration);
  const bool held = holder == options_.identity;
  const bool expired = now - observedAt_ >= std::chrono::seconds(observedDuration);
  // Someone else's name in the Lease ends our leadership now, even if we go on to take it over.
  if (!held) leader_.store(false);
  if (!held && !holder.empty() && !expired) return false;
  json updated = *current;
  updated["spec"]["holderIdentity"] = options_.identity;
  updated["spec"]["leaseDurationSeconds"] = duration;
  updated["spec"]["renewTime"] = stamp;
  if (!held) {
    updated["spec"]["acquireTime"] = stamp;
    updated["spec"]["leaseTransitions"] = lease->leaseTransitions + 1;
  }
  auto r = client_->update(leaseRef(), updated);
  if (!r) {
    if (!k8s::isConflict(r.status())) {
      degraded_.failed("lease", leaseRef().path() + " (write)",
                       "leader election: writing the lease failed: " + r.status().message());
    }
    const bool keep = held && !k8s::isConflict(r.status()) && withinRenewDeadline(now);
    leader_.store(keep);
    return keep;
  }
  if (!held)
    spdlog::info("leader election: {} acquired lease {}/{}", options_.identity, options_.ns,
                 options_.name);
  degraded_.cleared("lease", leaseRef().path() + " (write)");
  observedRecord_.clear();
  renewed(now);
  return true;
}

void LeaderElector::release() {
  if (!leader_.exchange(false)) return;
  auto current = client_->get(leaseRef());
  if (!current) return;
  auto lease = partition::readLease(*current);
  if (!lease || lease->holderIdentity != options_.identity) return;
  json updated = *current;
  updated["spec"]["holderIdentity"] = "";
  updated["spec"]["leaseDurationSeconds"] = 1;
  updated["spec"]["renewTime"] = microTime(std::chrono::system_clock::now());
  auto r = client_->update(leaseRef(), updated);
  if (!r) spdlog::warn("leader election: releasing lease failed: {}", r.status().message());
}

void LeaderElector::run(std::function<void()> onStartedLeading,
                        std::function<void()> onStoppedLeading) {
  thread_ = std::jthread([this, onStartedLeading = std::move(onStartedLeading),
                          onStoppedLeading = std::move(onStoppedLeading)](std::stop_token stop) {
    bool was = false;
    while (!stop.stop_requested()) {
      const bool is = tryAcquireOrRenew(options_.now());
      if (is && !was) onStartedLeading();
      if (!is && was) {
        onStoppedLeading();
        return;
      }
      was = is;
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock lock(mu);
      cv.wait_for(lock, stop, options_.retryPeriod, [] { return false; });
    }
  });
}

void LeaderElector::stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

}  // namespace gpuscale::reconciler
