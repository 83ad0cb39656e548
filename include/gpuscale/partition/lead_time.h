// Lead time: how long a lever takes on a node to turn a change into allocatable capacity, measured
// by the reconciler and fed back into anticipation (ceiling_forecast.h), which must start a change
// that long before the HPA reaches its ceiling.
//
// The reconciler records, per node change that succeeds, the time from its start to the new
// allocatable being seen (mig-manager run, device-plugin restart, GFD relabel), keyed by lever and
// node. The lead time of a policy for an HPA is then, per lever the policy lists, the larger of the
// policy's `anticipation.leadTime` for it (default and floor: a measurement never shortens it) and
// the longest recent measurement on any node the HPA's pods can use; the longest over the levers
// wins (a plan may use any of them).
//
// Why the longest recent one: anticipation is there so that capacity is allocatable when the HPA
// needs it; an estimate that is right on average is late half the time. Only the last kKept
// measurements per lever and node count, so a node that got faster (or a one-off slow run) stops
// counting after kKept changes.
//
// Thread safety: values; pure functions.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpuscale/partition/policy.h"

namespace gpuscale::partition {

class MeasuredLeadTimes {
 public:
  static constexpr std::size_t kKept = 8;

  // Adds one measurement, dropping the oldest beyond kKept. Values that are negative or not finite
  // are ignored.
  void record(Lever lever, const std::string& node, double seconds);
  // Recent measurements of `lever` on `node`, oldest first; empty when none.
  const std::vector<double>& recent(Lever lever, const std::string& node) const;
  bool empty() const { return byLeverNode_.empty(); }

 private:
  std::map<std::pair<Lever, std::string>, std::vector<double>> byLeverNode_;
};

struct LeadTime {
  double seconds = 0;
  // For explain: "policy leadTime" or "measured: migReshape on gpu-a100-1 took 74 s".
  std::string source;
};

// The lead time of `policy` for an HPA whose pods can use `nodes` (see the file comment).
LeadTime leadTimeFor(const Policy& policy, const std::vector<std::string>& nodes,
                     const MeasuredLeadTimes& measured);

}  // namespace gpuscale::partition
