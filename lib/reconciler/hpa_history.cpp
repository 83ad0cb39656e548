#include "gpuscale/reconciler/hpa_history.h"

#include <set>

namespace gpuscale::reconciler {

void HpaHistory::applyTo(partition::ClusterSnapshot& snapshot) const {
  for (auto& hpa : snapshot.hpas) {
    auto it = series_.find(hpa.ns + "/" + hpa.name);
    if (it == series_.end() || it->second.uid != hpa.uid) continue;
    hpa.history.assign(it->second.observations.begin(), it->second.observations.end());
  }
}

void HpaHistory::record(const std::vector<partition::WorkloadDemand>& workloads,
                        partition::TimePoint now) {
  std::set<std::string> seen;
  for (const auto& w : workloads) {
    if (w.hpa == nullptr) continue;
    const std::string key = w.ns + "/" + w.name;
    seen.insert(key);
    Series& s = series_[key];
    if (s.uid != w.hpa->uid) s = Series{w.hpa->uid, {}};
    // The HPA formula before anticipation raised it to a prediction.
    const int wanted = w.reason == partition::BlockReason::kAnticipated && w.forecast
                           ? w.forecast->observedWanted
                           : w.wanted;
    const partition::HpaObservation o{now, w.hpa->currentReplicas, w.hpa->desiredReplicas, wanted};
    auto& obs = s.observations;
    const bool same = !obs.empty() && obs.back().currentReplicas == o.currentReplicas &&
                      obs.back().desiredReplicas == o.desiredReplicas &&
                      obs.back().wanted == o.wanted;
    if (obs.empty() || !same || now - obs.back().at >= spacing_) obs.push_back(o);
    while (!obs.empty() &&
           (static_cast<int>(obs.size()) > maxPerHpa_ || now - obs.front().at > maxAge_)) {
      obs.pop_front();
    }
  }
  std::erase_if(series_, [&](const auto& kv) { return !seen.contains(kv.first); });
}

}  // namespace gpuscale::reconciler
