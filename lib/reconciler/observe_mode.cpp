#include "gpuscale/reconciler/observe_mode.h"

#include <spdlog/spdlog.h>

#include "ceiling_holder.h"

namespace gpuscale::reconciler {
namespace {

// The object an action would change, and the kind it counts under.
struct ActionTarget {
  EventTarget target;
  ActionKind kind;
};

ActionTarget targetOf(const partition::PlanAction& action) {
  if (const auto* mig = std::get_if<partition::MigReconfigure>(&action)) {
    return {EventTarget::node(mig->node), ActionKind::kMig};
  }
  if (const auto* ts = std::get_if<partition::TimeSlicingChange>(&action)) {
    return {EventTarget::node(ts->node),
            ts->mode == partition::SharingMode::kMps ? ActionKind::kMps : ActionKind::kTimeSlicing};
  }
  const auto& raise = std::get<partition::SetMaxReplicas>(action);
  return {demandEventTarget(raise.ns, raise.name), ActionKind::kMaxReplicas};
}

}  // namespace

std::optional<RunMode> parseRunMode(std::string_view text) {
  if (text == "act") return RunMode::kAct;
  if (text == "observe") return RunMode::kObserve;
  return std::nullopt;
}

std::string_view runModeName(RunMode mode) { return mode == RunMode::kAct ? "act" : "observe"; }

ObservingKubeClient::ObservingKubeClient(std::shared_ptr<kube::KubeClient> inner,
                                         std::shared_ptr<ReconcilerMetrics> metrics)
    : ForwardingKubeClient(std::move(inner)), metrics_(std::move(metrics)) {}

core::Result<kube::Object> ObservingKubeClient::write(const WriteCall& call, const Send&) {
  ++withheld_;
  if (metrics_) metrics_->wouldBeWrite(std::string(call.verb), call.ref.resource);
  {
    const std::string key = std::string(call.verb) + " " + call.ref.resource;
    std::lock_guard lock(mu_);
    if (logged_.insert(key).second) {
      spdlog::info(
          "observe mode: not sending {} {} (nor any later {} of {}: counted in "
          "gpuscale_reconciler_would_be_writes_total)",
          call.verb, call.ref.path(), call.verb, call.ref.resource);
    }
  }
  if (call.body == nullptr) return kube::Object{};  // delete
  if (call.verb != "patch") return *call.body;
  auto current = inner().get(call.ref);
  if (!current) return current.status();
  kube::Object object = std::move(*current);
  if (call.patchType == kube::PatchType::kMerge) {
    // resourceVersion is a precondition of the patch, not a change.
    kube::Object change = *call.body;
    if (change.is_object() && change.contains("metadata") && change["metadata"].is_object()) {
      change["metadata"].erase("resourceVersion");
    }
    object.merge_patch(change);
    return object;
  }
  try {
    return object.patch(*call.body);
  } catch (const nlohmann::json::exception& e) {
    return core::Status::badRequest(std::string("JSON patch does not apply: ") + e.what());
  }
}

ObservingActuator::ObservingActuator(std::shared_ptr<EventRecorder> events,
                                     std::shared_ptr<ReconcilerMetrics> metrics)
    : events_(std::move(events)), metrics_(std::move(metrics)) {}

ActuationReport ObservingActuator::apply(const partition::Plan& plan, const ClusterState&,
                                         TimePoint) {
  std::set<std::string> now;
  for (const auto& action : plan.actions) {
    std::string text = partition::actionToText(action);
    if (!reported_.contains(text)) {
      const ActionTarget t = targetOf(action);
      if (metrics_) metrics_->wouldAct(std::string(actionKindName(t.kind)));
      if (events_) {
        events_->record(t.target, false, "WouldAct",
                        "observe mode, nothing changed: would " + text +
                            " (the reconciler acts with --mode=act, chart value "
                            "reconciler.mode=act)");
      }
    }
    now.insert(std::move(text));
  }
  reported_ = std::move(now);
  return {};
}

}  // namespace gpuscale::reconciler
