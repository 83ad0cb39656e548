// The executor of node operations: start, observe, look up the transition, perform it. The
// transitions themselves are data (node_transitions.cpp); the writes are in node_writes.cpp.
#include "gpuscale/reconciler/node_operation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "actuator_internal.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/status_predicates.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/mig_restore.h"
#include "gpuscale/reconciler/optimistic_write.h"
#include "gpuscale/reconciler/published_devices.h"

namespace gpuscale::reconciler {
namespace {

using actuator_detail::noChange;
using actuator_detail::nodeRef;
using actuator_detail::reshapeTaints;
using actuator_detail::uidOf;
using nlohmann::json;

// What a kind of operation is called in Events, which lever it measures, how it is reported.
struct KindNames {
  NodeOpKind kind;
  std::string_view title;
  partition::Lever lever;
  ActionKind action;
};
constexpr KindNames kOperationKindNames[] = {
    {NodeOpKind::kMig, "MigReconfigure", partition::Lever::kMigReshape, ActionKind::kMig},
    {NodeOpKind::kTimeSlicing, "TimeSlicing", partition::Lever::kTimeSlicing,
     ActionKind::kTimeSlicing},
    {NodeOpKind::kMps, "Mps", partition::Lever::kMps, ActionKind::kMps},
};

const KindNames& namesOf(NodeOpKind kind) {
  for (const auto& k : kOperationKindNames) {
    if (k.kind == kind) return k;
  }
  return kOperationKindNames[1];
}

std::string opTitle(NodeOpKind kind) { return std::string(namesOf(kind).title); }

// The Event reason of a finished operation: <Kind>Succeeded|Failed|TimedOut|Aborted (superseded
// reads as Failed).
std::string finishReason(NodeOpKind kind, Outcome outcome) {
  switch (outcome) {
    case Outcome::kSucceeded:
      return opTitle(kind) + "Succeeded";
    case Outcome::kTimedOut:
      return opTitle(kind) + "TimedOut";
    case Outcome::kAborted:
      return opTitle(kind) + "Aborted";
    default:
      return opTitle(kind) + "Failed";
  }
}

// What proves a change real, as the Events name it: node allocatable, or on a DRA node the
// devices its driver publishes (published_devices.h).
std::string_view capacityShows(bool dra) {
  return dra ? "the published devices show" : "allocatable shows";
}

// What the finish says, per observation; `detail` is what the pass found (the pod in the way);
// `dra` when the node's capacity is its published devices.
std::string finishMessage(NodeOpEvent event, const NodeIntent& intent,
                          const partition::NodeObject& node, const std::string& detail, bool dra) {
  const bool mig = intent.kind == NodeOpKind::kMig;
  switch (event) {
    case NodeOpEvent::kNotMigManaged:
      return "no mig-manager reports nvidia.com/mig.config.state on the node, so nothing would "
             "apply the change; the node is not MIG-managed and was not tainted";
    case NodeOpEvent::kPrepareTimedOut:
      return "could not prepare the change in time";
    case NodeOpEvent::kPodInTheWay:
      return "pod " + detail + " started on the node before the reshape; nothing changed";
    case NodeOpEvent::kLabelChangedByOther:
      return fmt::format("{} was changed by someone else to \"{}\"", intent.labelKey(),
                         node.meta.label(intent.labelKey()));
    case NodeOpEvent::kOperatorFailed:
      return "mig-manager reported failed; previous config \"" + intent.previous + "\" restored";
    case NodeOpEvent::kCapacityReady:
      return fmt::format("{} {} {} {} {}", mig ? "MIG config" : "device-plugin config",
                         intent.label, mig ? "applied and" : "active;", capacityShows(dra),
                         json(intent.expect).dump());
    case NodeOpEvent::kNoCapacity:
      return dra ? "MIG config applied but the published devices never showed the new devices"
                 : "MIG config applied but allocatable never showed the new resources";
    case NodeOpEvent::kStuck:
      return "mig-manager stuck in \"" + node.meta.label(k8s::kMigConfigStateLabel) +
             "\" past the MIG timeout; previous config \"" + intent.previous + "\" restored";
    case NodeOpEvent::kTimedOut:
      return mig ? "mig-manager did not answer in time (state \"" +
                       node.meta.label(k8s::kMigConfigStateLabel) + "\"); previous config \"" +
                       intent.previous + "\" restored"
                 : "allocatable never showed the new replicas; previous device-plugin config "
                   "restored";
    default:
      return std::string(nodeOpEventName(event));
  }
}

}  // namespace

ActionKind actionKindOf(NodeOpKind kind) { return namesOf(kind).action; }

NodeOperations::NodeOperations(std::shared_ptr<kube::KubeClient> client,
                               std::shared_ptr<EventRecorder> events,
                               std::shared_ptr<GpuPodMapping> gpuPods, ActuatorOptions options,
                               std::shared_ptr<ReconcilerMetrics> metrics)
    : client_(std::move(client)),
      events_(std::move(events)),
      gpuPods_(std::move(gpuPods)),
      options_(std::move(options)),
      timeouts_{options_.migTimeout, options_.allocatableTimeout, options_.migConfigPropagation},
      degraded_(std::move(metrics)) {}

bool NodeOperations::start(const NodeWork& work, const std::string& plan, TimePoint now,
                           ActuationReport& report) {
  NodeIntent intent = work.intent;
  intent.plan = plan;
  intent.started = now;
  const auto target = EventTarget::node(work.node);
  if (intent.kind == NodeOpKind::kMig) {
    auto busy = podInTheWay(work.node, intent.gpus, now);
    if (!busy || !busy->empty()) {
      std::string why = busy ? "pod " + *busy + " runs there" : busy.status().message();
      events_->record(target, true, "ReshapeSkipped", "not reshaping MIG on this node: " + why);
      report.outcomes.push_back({ActionKind::kMig, Outcome::kAborted});
      return false;
    }
  }
  bool written = false;
  auto r = patchWithRetry(
      *client_, nodeRef(work.node),
      [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
        written = false;
        auto node = partition::readNode(object);
        if (!node) return node.status();
        if (!node->meta.annotation(k8s::kIntentAnnotation).empty())
          return noChange();  // already in flight
        const std::string state = node->meta.label(k8s::kMigConfigStateLabel);
        if (state == "pending" || state == "failed" || state == "rebooting") return noChange();
        // Nothing would answer a MIG change there (node_transitions.h: NotMigManaged).
        if (intent.kind == NodeOpKind::kMig && !migManaged(*node)) return noChange();
        intent.previous = node->meta.label(intent.labelKey());
        if (intent.previous == intent.label) return noChange();
        written = true;
        return std::optional<kube::Object>(
            json{{"metadata",
                  {{"annotations",
                    {{std::string(k8s::kIntentAnnotation), encodeNodeIntent(intent)}}}}}});
      });
  if (!r) {
    degraded_.failed("node_intent", work.node, "could not record intent: " + r.status().message());
    return false;
  }
  degraded_.cleared("node_intent", work.node);
  if (!written) return false;
  started_.insert(work.node);
  report.outcomes.push_back({actionKindOf(intent.kind), Outcome::kStarted});
  std::string what =
      intent.kind == NodeOpKind::kMig
          ? fmt::format("MIG config {} -> {}", intent.previous, intent.label)
          : fmt::format("device-plugin config {} -> {}", intent.previous, intent.label);
  events_->record(
      target, false, opTitle(intent.kind) + "Planned",
      fmt::format("plan {}: {}; expecting {} {}", plan, what,
                  work.dra ? "published devices" : "allocatable", json(intent.expect).dump()));
  return advance(work.node, now, report);
}

bool NodeOperations::advance(const std::string& name, TimePoint now, ActuationReport& report) {
  auto node = actuator_detail::getNode(*client_, name);
  if (!node) {
    if (k8s::isNotFound(node.status())) started_.erase(name);
    return !k8s::isNotFound(node.status());
  }
  auto intent = liveIntent(*node);
  if (!intent) {
    if (!node->meta.annotation(k8s::kIntentAnnotation).empty() &&
        decodeNodeIntent(node->meta.annotation(k8s::kIntentAnnotation))) {
      // Not one the reconciler could have written: never acted on (the node stays in transition
      // for the planner, so nothing else changes it either).
      degraded_.failed("node_intent_invalid", name,
                       "ignoring an intent annotation that names configs this node does not own");
    }
    started_.erase(name);
    // Whatever the annotation says, no operation of the reconciler runs there: a reshape taint
    // left on the node is an orphan.
    if (reshapeTainted(*node)) removeOrphanTaint(name, report);
    return false;
  }
  degraded_.cleared("node_intent_invalid", name);
  std::string detail;
  NodeOpEvent event = NodeOpEvent::kWaiting;
  bool dra = false;
  if (intent->phase == NodeOpPhase::kApplied) {
    // On a DRA node the new MIG devices show in the driver's republished ResourceSlices, not in
    // allocatable: they stand for it. A LIST that fails leaves allocatable (no devices: waiting).
    if (intent->kind == NodeOpKind::kMig) {
      if (auto published = publishedDevices(*client_, name); published && *published) {
        node->allocatable = (*published)->devices;
        dra = true;
      }
    }
    event = observeApplied(*intent, *node, now, timeouts_);
  } else if (intent->kind == NodeOpKind::kMig && !migManaged(*node)) {
    event = NodeOpEvent::kNotMigManaged;
  } else if (prepareTimedOut(*intent, now, timeouts_)) {
    event = NodeOpEvent::kPrepareTimedOut;
  } else {
    auto prepared = prepare(name, *intent, now);
    event = prepared.first;
    detail = std::move(prepared.second);
  }
  const NodeTransition* t = findTransition(intent->phase, intent->kind, event);
  if (t == nullptr) return true;  // not an observation of this phase and kind: look again
  switch (t->step) {
    case NodeStep::kWait:
    case NodeStep::kRemoveTaint:  // a step of phase none, never of an operation
      return true;
    case NodeStep::kApply:
      applyLabel(name, *intent, now, EventTarget::node(name, node->meta.uid));
      return true;
    case NodeStep::kFollowUp:
      return followUp(name, *intent, dra, now, report);
    case NodeStep::kFinish:
      finish(name, *intent, *t, finishMessage(event, *intent, *node, detail, dra), now, report);
      return false;
  }
  return true;
}

std::pair<NodeOpEvent, std::string> NodeOperations::prepare(const std::string& name,
                                                            const NodeIntent& intent,
                                                            TimePoint now) {
  auto written = writeConfig(name, intent);
  if (!written) {
    degraded_.failed("partition_config", name,
                     "writing config " + intent.label + " failed: " + written.status().message());
    return {NodeOpEvent::kStepFailed, ""};
  }
  degraded_.cleared("partition_config", name);
  if (intent.kind != NodeOpKind::kMig) return {NodeOpEvent::kPrepared, ""};
  // A config that was already in the ConfigMap is in mig-manager's file too.
  if (*written && !intent.configWritten && timeouts_.migConfigPropagation.count() > 0) {
    if (auto s = recordConfigWritten(name, intent, now); !s.ok()) {
      degraded_.failed(
          "partition_config", name,
          "recording when config " + intent.label + " was written failed: " + s.message());
      return {NodeOpEvent::kStepFailed, ""};
    }
    return {NodeOpEvent::kConfigPropagating, ""};
  }
  if (configPropagating(intent, now, timeouts_)) return {NodeOpEvent::kConfigPropagating, ""};
  // New pods are kept off the node first, so the check below stays true until mig-manager runs;
  // a pod may have started since the plan was made.
  if (auto s = taintForReshape(name, intent); !s.ok()) {
    degraded_.failed("reshape_taint", name, "tainting the node failed: " + s.message());
    return {NodeOpEvent::kStepFailed, ""};
  }
  degraded_.cleared("reshape_taint", name);
  auto busy = podInTheWay(name, intent.gpus, now);
  if (!busy) return {NodeOpEvent::kStepFailed, ""};
  if (!busy->empty()) return {NodeOpEvent::kPodInTheWay, *busy};
  return {NodeOpEvent::kPrepared, ""};
}

bool NodeOperations::applyLabel(const std::string& name, const NodeIntent& intent, TimePoint now,
                                const EventTarget& target) {
  NodeIntent applied = intent;
  applied.phase = NodeOpPhase::kApplied;
  applied.applied = now;
  auto r = actuator_detail::patchNodeOfIntent(
      *client_, name, intent, actuator_detail::IntentMatch::kExact,
      [&](const partition::NodeObject& current) -> core::Result<std::optional<kube::Object>> {
        json annotations{{std::string(k8s::kIntentAnnotation), encodeNodeIntent(applied)}};
        if (intent.kind == NodeOpKind::kMig) {
          // What a give-back returns to (partition/mig_restore.h).
          auto restore = partition::nextMigRestore(
              partition::decodeMigRestore(current.meta.annotation(k8s::kMigRestoreAnnotation)),
              current.meta.label(k8s::kMigConfigLabel), intent.label);
          annotations[std::string(k8s::kMigRestoreAnnotation)] =
              restore ? json(partition::encodeMigRestore(*restore)) : json(nullptr);
        }
        return std::optional<kube::Object>(
            json{{"metadata",
                  {{"labels", {{std::string(intent.labelKey()), intent.label}}},
                   {"annotations", annotations}}}});
      });
  if (!r) {
    degraded_.failed(
        "label_flip", name,
        fmt::format("flipping {} failed: {}", intent.labelKey(), r.status().message()));
    return false;
  }
  degraded_.cleared("label_flip", name);
  if (r->changed) {
    events_->record(target, false, opTitle(intent.kind) + "Started",
                    fmt::format("plan {}: {}={} set; waiting for the GPU Operator", intent.plan,
                                intent.labelKey(), intent.label));
  }
  return r->changed;
}

bool NodeOperations::followUp(const std::string& name, const NodeIntent& mig, bool dra,
                              TimePoint now, ActuationReport& report) {
  NodeIntent next;
  next.plan = mig.plan;
  next.kind = NodeOpKind::kTimeSlicing;
  next.label = mig.then->label;
  next.config = mig.then->config;
  next.expect = mig.then->expect;
  next.started = now;
  auto r = actuator_detail::patchNodeOfIntent(
      *client_, name, mig, actuator_detail::IntentMatch::kExact,
      [&](const partition::NodeObject& current) -> core::Result<std::optional<kube::Object>> {
        next.previous = current.meta.label(k8s::kDevicePluginConfigLabel);
        json patch{
            {"metadata",
             {{"annotations", {{std::string(k8s::kIntentAnnotation), encodeNodeIntent(next)}}}}}};
        // The MIG step is over; time-slicing destroys no pod.
        if (auto taints = reshapeTaints(current, false)) patch["spec"]["taints"] = *taints;
        return std::optional<kube::Object>(patch);
      });
  if (!r) {
    degraded_.failed("node_intent", name,
                     "could not record the time-slicing step: " + r.status().message());
    return true;
  }
  degraded_.cleared("node_intent", name);
  if (!r->changed) return true;  // someone moved the intent on: the next pass reads it
  report.outcomes.push_back({ActionKind::kMig, Outcome::kSucceeded});
  const auto target = EventTarget::node(name, uidOf(r->object));
  events_->record(target, false, "MigReconfigureSucceeded",
                  fmt::format("plan {}: MIG config {} applied and {} {}; "
                              "time-slicing {} -> {} follows",
                              mig.plan, mig.label, capacityShows(dra), json(mig.expect).dump(),
                              next.previous.empty() ? "(none)" : next.previous, next.label));
  events_->record(target, false, "TimeSlicingPlanned",
                  fmt::format("plan {}: device-plugin config {} -> {}; expecting allocatable {}",
                              mig.plan, next.previous, next.label, json(next.expect).dump()));
  return advance(name, now, report);
}

void NodeOperations::finish(const std::string& name, const NodeIntent& intent,
                            const NodeTransition& t, const std::string& message, TimePoint now,
                            ActuationReport& report) {
  const NodeOutcome outcome{intent.plan, intent.kind, t.outcome, message, now};
  std::vector<std::string> repaired;
  auto r = actuator_detail::patchNodeOfIntent(
      *client_, name, intent, actuator_detail::IntentMatch::kSamePlan,
      [&](const partition::NodeObject& current) -> core::Result<std::optional<kube::Object>> {
        repaired.clear();
        json labels = json::object();
        if (t.label == LabelOnFinish::kRestorePrevious &&
            current.meta.label(intent.labelKey()) == intent.label) {
          labels[std::string(intent.labelKey())] =
              intent.previous.empty() ? json(nullptr) : json(intent.previous);
        }
        // mig-manager still pending (or rebooting the node) owns the operand labels while it runs.
        const std::string state = current.meta.label(k8s::kMigConfigStateLabel);
        if (t.operands == Operands::kUnpause && state != "pending" && state != "rebooting") {
          for (const auto& [key, value] : current.meta.labels) {
            if (key.rfind(k8s::kDeployLabelPrefix, 0) == 0 && value == kPausedForMigChange) {
              labels[key] = "true";
              repaired.push_back(key);
            }
          }
        }
        json annotations{{std::string(k8s::kIntentAnnotation), nullptr},
                         {std::string(k8s::kOutcomeAnnotation), encodeNodeOutcome(outcome)}};
        if (t.backoff == Backoff::kBackOff) {
          annotations[std::string(k8s::kBackoffAnnotation)] =
              core::formatRfc3339(now + options_.failureBackoff);
        }
        json patch{{"metadata", {{"annotations", annotations}}}};
        if (!labels.empty()) patch["metadata"]["labels"] = labels;
        if (auto taints = reshapeTaints(current, false)) patch["spec"]["taints"] = *taints;
        return std::optional<kube::Object>(patch);
      });
  if (!r) {
    degraded_.failed("node_outcome", name,
                     fmt::format("recording outcome {} failed: {}", outcomeName(t.outcome),
                                 r.status().message()));
    return;
  }
  degraded_.cleared("node_outcome", name);
  started_.erase(name);
  if (t.outcome == Outcome::kSucceeded) {
    report.leverSeconds.push_back({namesOf(intent.kind).lever, name,
                                   std::chrono::duration<double>(now - intent.started).count()});
  }
  report.outcomes.push_back({actionKindOf(intent.kind), t.outcome});
  if (!t.stall.empty()) report.stalls.emplace_back(t.stall);
  const auto target = EventTarget::node(name, uidOf(r->object));
  events_->record(target, t.outcome != Outcome::kSucceeded, finishReason(intent.kind, t.outcome),
                  fmt::format("plan {}: {}", intent.plan, message));
  if (!repaired.empty()) {
    events_->record(target, true, "OperandsUnpaused",
                    fmt::format("operand labels left paused after the failed MIG change set back "
                                "to \"true\": {}",
                                fmt::join(repaired, ", ")));
  }
}

bool NodeOperations::removeOrphanTaint(const std::string& name, ActuationReport& report) {
  const NodeTransition* t =
      findTransition(NodeOpPhase::kNone, NodeOpKind::kMig, NodeOpEvent::kOrphanTaint);
  bool hadIntent = false;
  auto r =
      patchWithRetry(*client_, nodeRef(name),
                     [&](const kube::Object& object) -> core::Result<std::optional<kube::Object>> {
                       auto node = partition::readNode(object);
                       if (!node) return node.status();
                       // A live operation owns its taint (the fresh read decides, not the caches).
                       if (liveIntent(*node)) return noChange();
                       hadIntent = !node->meta.annotation(k8s::kIntentAnnotation).empty();
                       auto taints = reshapeTaints(*node, false);
                       if (!taints) return noChange();
                       return std::optional<kube::Object>(json{{"spec", {{"taints", *taints}}}});
                     });
  if (!r) {
    degraded_.failed("reshape_taint", name,
                     "removing an orphaned reshape taint failed: " + r.status().message());
    return false;
  }
  degraded_.cleared("reshape_taint", name);
  if (!r->changed) return false;
  report.stalls.emplace_back(t->stall);
  events_->record(EventTarget::node(name, uidOf(r->object)), true, "ReshapeTaintRemoved",
                  fmt::format("{} removed: no gpuscale operation runs on the node ({}); the "
                              "reconciler stopped mid-step or the intent was removed",
                              k8s::kReshapeTaint,
                              hadIntent ? "its gpuscale.io/intent is not one gpuscale could have "
                                          "written"
                                        : "no gpuscale.io/intent"));
  return true;
}

}  // namespace gpuscale::reconciler
