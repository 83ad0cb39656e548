// What anticipation remembers between passes: a short series of observations per managed HPA
// (time, current and desired replicas, the replicas its formula wants), bound to the HPA's uid.
//
// An observation is kept when it differs from the last one kept for the HPA or when `spacing` has
// passed since (the HPA controller syncs every 15 s by default, so one per sync); at most
// `maxPerHpa` are kept, none older than `maxAge`. HPAs absent from a pass are forgotten. The
// series lives in memory only: a restarted or newly elected reconciler starts without a trend
// (a demand already beyond the ceiling is still seen at once; see partition/ceiling_forecast.h).
//
// Thread safety: none; the controller's loop is its only user.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::reconciler {

class HpaHistory {
 public:
  explicit HpaHistory(std::chrono::seconds spacing = std::chrono::seconds(15),
                      std::chrono::seconds maxAge = std::chrono::minutes(10), int maxPerHpa = 32)
      : spacing_(spacing), maxAge_(maxAge), maxPerHpa_(maxPerHpa) {}

  // Gives each HPA of `snapshot` the observations remembered for it (same uid), older first.
  void applyTo(partition::ClusterSnapshot& snapshot) const;
  // Records this pass's observation of every assessed workload at `now`, and forgets HPAs that
  // are no longer assessed.
  void record(const std::vector<partition::WorkloadDemand>& workloads, partition::TimePoint now);
  std::size_t size() const { return series_.size(); }

 private:
  struct Series {
    std::string uid;
    std::deque<partition::HpaObservation> observations;
  };
  std::chrono::seconds spacing_, maxAge_;
  int maxPerHpa_;
  std::map<std::string, Series> series_;  // namespace/name
};

}  // namespace gpuscale::reconciler
