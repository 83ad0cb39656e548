// Degraded conditions that last across reconcile passes (a write to one object that keeps failing,
// a snapshot that cannot be built) are logged once when they start and once when they clear, not on
// every pass, and every occurrence counts in /metrics as
// gpuscale_reconciler_degraded_total{what} (ReconcilerMetrics::degraded).
//
// A condition is named by `what` (a fixed, bounded word such as "hpa_status": the metric label)
// and `object` (e.g. "default/triton"; only in the log line).
//
// Thread safety: all members are thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "gpuscale/reconciler/reconciler_metrics.h"

namespace gpuscale::reconciler {

class DegradedLog {
 public:
  explicit DegradedLog(std::shared_ptr<ReconcilerMetrics> metrics = nullptr);

  // The condition holds now: counted; logged as a warning only when it was not already active.
  // Returns true when this call logged.
  bool failed(std::string_view what, std::string_view object, std::string_view message);
  // The condition no longer holds: logged once when it was active.
  void cleared(std::string_view what, std::string_view object);
  bool active(std::string_view what, std::string_view object) const;

 private:
  std::shared_ptr<ReconcilerMetrics> metrics_;
  mutable std::mutex mu_;
  std::set<std::string> active_;  // what + '\x1f' + object
};

}  // namespace gpuscale::reconciler
