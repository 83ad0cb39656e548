#include "gpuscale/reconciler/degraded_log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace gpuscale::reconciler {
namespace {

std::string keyOf(std::string_view what, std::string_view object) {
  return fmt::format("{}\x1f{}", what, object);
}

}  // namespace

DegradedLog::DegradedLog(std::shared_ptr<ReconcilerMetrics> metrics)
    : metrics_(std::move(metrics)) {}

bool DegradedLog::failed(std::string_view what, std::string_view object, std::string_view message) {
  if (metrics_) metrics_->degraded(std::string(what));
  bool first = false;
  {
    std::lock_guard lock(mu_);
    first = active_.insert(keyOf(what, object)).second;
  }
  if (first) {
    spdlog::warn(
        "{} {}: {} (logged once until it clears; counted in "
        "gpuscale_reconciler_degraded_total{{what=\"{}\"}})",
        what, object, message, what);
  }
  return first;
}

void DegradedLog::cleared(std::string_view what, std::string_view object) {
  bool was = false;
  {
    std::lock_guard lock(mu_);
    was = active_.erase(keyOf(what, object)) > 0;
  }
  if (was) spdlog::info("{} {}: recovered", what, object);
}

bool DegradedLog::active(std::string_view what, std::string_view object) const {
  std::lock_guard lock(mu_);
  return active_.contains(keyOf(what, object));
}

}  // namespace gpuscale::reconciler
