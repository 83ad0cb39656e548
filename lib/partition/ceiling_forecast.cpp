#include "gpuscale/partition/ceiling_forecast.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "saturating.h"

namespace gpuscale::partition {
namespace {

// Each earlier observation in a row that also wanted more than the ceiling adds this much.
constexpr double kStreakWeight = 0.25;

double secondsBetween(TimePoint from, TimePoint to) {
  return std::chrono::duration<double>(to - from).count();
}

struct Line {
  double slope = 0;  // per second
  double r2 = 0;
  double risingShare = 0;
  int points = 0;
  double span = 0;  // seconds from the first observation to the last
};

// Least-squares line through (seconds before now, wanted) of the observations in the window.
Line fitTrend(const std::vector<const HpaObservation*>& points, TimePoint now) {
  Line line;
  line.points = static_cast<int>(points.size());
  if (points.size() < 2) return line;
  line.span = secondsBetween(points.front()->at, points.back()->at);
  double sx = 0, sy = 0;
  for (const auto* p : points) {
    sx += secondsBetween(now, p->at);
    sy += p->wanted;
  }
  const double n = static_cast<double>(points.size());
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (const auto* p : points) {
    const double dx = secondsBetween(now, p->at) - mx, dy = p->wanted - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  if (sxx <= 0 || syy <= 0) return line;
  line.slope = sxy / sxx;
  line.r2 = (sxy * sxy) / (sxx * syy);
  double rising = 0;
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (points[i]->wanted > points[i - 1]->wanted) {
      rising += 1;
    } else if (points[i]->wanted == points[i - 1]->wanted) {
      rising += 0.5;
    }
  }
  line.risingShare = rising / (n - 1);
  return line;
}

}  // namespace

CeilingForecast forecastCeiling(const std::vector<HpaObservation>& history,
                                const HpaObservation& current, int maxReplicas, double leadSeconds,
                                const Anticipation& knobs, TimePoint now) {
  CeilingForecast f;
  f.predictedWanted = current.wanted;
  f.observedWanted = current.wanted;
  if (!knobs.enabled || maxReplicas < 1) return f;
  const double horizon = static_cast<double>(knobs.horizon.count());
  std::vector<const HpaObservation*> window;
  for (const auto& h : history) {
    const double age = secondsBetween(h.at, now);
    if (age >= 0 && age <= horizon && h.at < current.at) window.push_back(&h);
  }
  window.push_back(&current);
  const Line line = fitTrend(window, now);
  f.slopePerMinute = line.slope * 60;
  const double lead = std::clamp(leadSeconds, 0.0, horizon);
  // Only a trend (enough observations over enough time) may project beyond what is wanted now.
  const bool trend = line.points >= knobs.minObservations &&
                     line.span >= static_cast<double>(knobs.minSpan.count());
  const double projected = current.wanted + (trend ? std::max(0.0, line.slope) * lead : 0.0);
  f.predictedWanted =
      std::max(addSaturated(maxReplicas, 1), saturatedInt(std::ceil(projected - 1e-9)));

  if (current.wanted > maxReplicas) {
    int streak = 0;
    for (auto it = window.rbegin(); it != window.rend() && (*it)->wanted > maxReplicas; ++it) {
      ++streak;
    }
    const double overshoot = static_cast<double>(current.wanted - maxReplicas) / maxReplicas;
    f.etaSeconds = 0;
    f.confidence = std::min(1.0, overshoot + kStreakWeight * (streak - 1));
    f.why = fmt::format(
        "the HPA's formula wants {} replicas against maxReplicas {} ({} observation(s) in a row, "
        "current {}, desired {}); confidence {:.2f}",
        current.wanted, maxReplicas, streak, current.currentReplicas, current.desiredReplicas,
        f.confidence);
  } else if (trend && line.slope > 0) {
    f.etaSeconds = (maxReplicas - current.wanted) / line.slope;
    f.confidence = std::clamp(line.risingShare * line.r2, 0.0, 1.0);
    f.why = fmt::format(
        "wanted replicas rise {:.1f}/min over {} observations ({} now, R^2 {:.2f}): maxReplicas "
        "{} in {:.0f} s; confidence {:.2f}",
        f.slopePerMinute, line.points, current.wanted, line.r2, maxReplicas, f.etaSeconds,
        f.confidence);
  } else {
    if (line.points < knobs.minObservations) {
      f.why = fmt::format("{} observation(s), {} needed for a trend", line.points,
                          knobs.minObservations);
    } else if (line.slope > 0) {
      f.why = fmt::format("observations span {:.0f} s, a trend needs {} s", line.span,
                          knobs.minSpan.count());
    } else {
      f.why = "wanted replicas do not rise";
    }
    return f;
  }
  f.reaches =
      f.etaSeconds <= lead && f.etaSeconds <= horizon && f.confidence >= knobs.minConfidence;
  return f;
}

double leadSecondsFor(const Policy& policy) {
  double lead = 0;
  for (Lever lever : policy.levers) {
    auto it = policy.anticipation.leadTime.find(lever);
    if (it != policy.anticipation.leadTime.end()) {
      lead = std::max(lead, static_cast<double>(it->second.count()));
    }
  }
  return lead;
}

}  // namespace gpuscale::partition
