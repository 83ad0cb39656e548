#include "gpuscale/partition/lead_time.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gpuscale/partition/ceiling_forecast.h"

namespace gpuscale::partition {

void MeasuredLeadTimes::record(Lever lever, const std::string& node, double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return;
  std::vector<double>& kept = byLeverNode_[{lever, node}];
  kept.push_back(seconds);
  if (kept.size() > kKept) kept.erase(kept.begin(), kept.end() - kKept);
}

const std::vector<double>& MeasuredLeadTimes::recent(Lever lever, const std::string& node) const {
  static const std::vector<double> kNone;
  const auto it = byLeverNode_.find({lever, node});
  return it == byLeverNode_.end() ? kNone : it->second;
}

LeadTime leadTimeFor(const Policy& policy, const std::vector<std::string>& nodes,
                     const MeasuredLeadTimes& measured) {
  // max over levers of max(floor, measured) = max(the longest floor, the longest measurement).
  LeadTime out{leadSecondsFor(policy), "policy leadTime"};
  for (Lever lever : policy.levers) {
    for (const std::string& node : nodes) {
      const std::vector<double>& recent = measured.recent(lever, node);
      if (recent.empty()) continue;
      const double longest = *std::max_element(recent.begin(), recent.end());
      if (longest > out.seconds) {
        out = {longest,
               fmt::format("measured: {} on {} took {:.0f} s", leverName(lever), node, longest)};
      }
    }
  }
  return out;
}

}  // namespace gpuscale::partition
