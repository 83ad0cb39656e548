// Anticipation: predicts, from an HPA's own inputs, when it will be held at its maxReplicas, so
// that the reconciler can start a partition change early enough for the new capacity to be
// allocatable by then.
//
// Inputs are what the HPA controller itself reads, observed once per change of the HPA's status
// (its sync period, 15 s by default): the replicas its formula wants without limits (`wanted`, see
// demand.h: metric / target x ready pods), its current and desired replicas. The prediction:
//   - already beyond: `wanted` > maxReplicas now. The HPA is on its way to the ceiling and only its
//     scale-up rate limit (ScaleUpLimit) holds it below; eta 0. Confidence grows with the overshoot
//     ((wanted - max) / max, capped at 1) and with the observations in a row that agree.
//   - trend: a least-squares line through `wanted` over the observations of the last `horizon`
//     (at least `minObservations`, spanning at least `minSpan`); eta = when the line crosses
//     maxReplicas. Confidence = the share
//     of steps that rose times the fit's R^2 (a steady climb scores 1, noise near 0).
// The reconciler acts when eta <= the lead time of the levers it would use (how long a change takes
// to become allocatable), eta <= horizon, and confidence >= minConfidence. What it asks for is the
// line's value at now + lead time (at least maxReplicas + 1).
//
// Limits: a step in the load is seen only once it moves the metric (one scrape and one HPA sync);
// a trend needs a few sync periods; history lives in the reconciler's memory and restarts empty.
//
// Thread safety: pure functions over values.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

struct CeilingForecast {
  bool reaches = false;  // within the horizon, at the policy's confidence
  double etaSeconds =
      -1;  // from now until wanted crosses maxReplicas (0: already beyond); -1: never
  double confidence = 0;      // 0..1
  double slopePerMinute = 0;  // of `wanted`, from the trend
  int predictedWanted = 0;    // what to plan for: wanted at now + lead time
  int observedWanted = 0;     // the HPA formula in this pass (before the prediction)
  std::string why;            // one sentence: what was predicted and from what
};

// `history` in time order (older first; entries after `now` are ignored), `current` the observation
// of this pass; `leadSeconds` the time the change would need. Pure and deterministic.
CeilingForecast forecastCeiling(const std::vector<HpaObservation>& history,
                                const HpaObservation& current, int maxReplicas, double leadSeconds,
                                const Anticipation& knobs, TimePoint now);

// The lead time of the policy's levers: the longest of those it lists (a plan may use any).
double leadSecondsFor(const Policy& policy);

}  // namespace gpuscale::partition
