#include "gpuscale/reconciler/node_transitions.h"

#include <algorithm>
#include <array>

#include "gpuscale/core/enum_names.h"
#include "gpuscale/k8s/well_known_keys.h"

namespace gpuscale::reconciler {
namespace {

using E = NodeOpEvent;
using enum NodeKinds;
using enum NodeStep;
constexpr auto kNone = NodeOpPhase::kNone;
constexpr auto kPrepared = NodeOpPhase::kPrepared;
constexpr auto kApplied = NodeOpPhase::kApplied;
constexpr auto kRestore = LabelOnFinish::kRestorePrevious;
constexpr auto kKeep = LabelOnFinish::kKeep;
constexpr auto kBackOff = Backoff::kBackOff;
constexpr auto kNoBackoff = Backoff::kNone;
constexpr auto kUnpause = Operands::kUnpause;
constexpr auto kLeave = Operands::kLeave;

constexpr std::array kTransitions{
    NodeTransition{"none/any/orphan-taint", kNone, kAny, E::kOrphanTaint, kRemoveTaint,
                   Outcome::kStarted, kKeep, kNoBackoff, kLeave, "orphan_taint"},
    NodeTransition{"prepared/mig/not-mig-managed", kPrepared, kMig, E::kNotMigManaged, kFinish,
                   Outcome::kAborted, kKeep, kBackOff, kLeave, "mig_manager_absent"},
    NodeTransition{"prepared/mig/prepare-timed-out", kPrepared, kMig, E::kPrepareTimedOut, kFinish,
                   Outcome::kFailed, kKeep, kBackOff, kUnpause, "prepare_timeout"},
    NodeTransition{"prepared/sharing/prepare-timed-out", kPrepared, kSharing, E::kPrepareTimedOut,
                   kFinish, Outcome::kFailed, kKeep, kBackOff, kLeave, "prepare_timeout"},
    NodeTransition{"prepared/mig/pod-in-the-way", kPrepared, kMig, E::kPodInTheWay, kFinish,
                   Outcome::kAborted, kKeep, kNoBackoff, kUnpause},
    NodeTransition{"prepared/any/step-failed", kPrepared, kAny, E::kStepFailed, kWait},
    NodeTransition{"prepared/mig/config-propagating", kPrepared, kMig, E::kConfigPropagating,
                   kWait},
    NodeTransition{"prepared/any/prepared", kPrepared, kAny, E::kPrepared, kApply,
                   Outcome::kStarted},
    NodeTransition{"applied/mig/label-changed-by-other", kApplied, kMig, E::kLabelChangedByOther,
                   kFinish, Outcome::kSuperseded, kKeep, kNoBackoff, kUnpause},
    NodeTransition{"applied/sharing/label-changed-by-other", kApplied, kSharing,
                   E::kLabelChangedByOther, kFinish, Outcome::kSuperseded, kKeep, kNoBackoff,
                   kLeave},
    NodeTransition{"applied/mig/operator-failed", kApplied, kMig, E::kOperatorFailed, kFinish,
                   Outcome::kFailed, kRestore, kBackOff, kUnpause, "mig_manager_failed"},
    NodeTransition{"applied/mig/capacity-ready", kApplied, kMig, E::kCapacityReady, kFinish,
                   Outcome::kSucceeded, kKeep, kNoBackoff, kLeave},
    NodeTransition{"applied/mig/capacity-ready-then-sharing", kApplied, kMig, E::kCapacityReadyThen,
                   kFollowUp, Outcome::kSucceeded},
    NodeTransition{"applied/mig/stuck", kApplied, kMig, E::kStuck, kFinish, Outcome::kTimedOut,
                   kRestore, kBackOff, kUnpause, "mig_manager_stuck"},
    NodeTransition{"applied/mig/timed-out", kApplied, kMig, E::kTimedOut, kFinish,
                   Outcome::kTimedOut, kRestore, kBackOff, kUnpause, "mig_manager_silent"},
    NodeTransition{"applied/mig/no-capacity", kApplied, kMig, E::kNoCapacity, kFinish,
                   Outcome::kTimedOut, kKeep, kBackOff, kUnpause, "no_capacity"},
    NodeTransition{"applied/sharing/capacity-ready", kApplied, kSharing, E::kCapacityReady, kFinish,
                   Outcome::kSucceeded, kKeep, kNoBackoff, kLeave},
    NodeTransition{"applied/sharing/timed-out", kApplied, kSharing, E::kTimedOut, kFinish,
                   Outcome::kTimedOut, kRestore, kBackOff, kLeave, "no_capacity"},
    NodeTransition{"applied/any/waiting", kApplied, kAny, E::kWaiting, kWait},
};

bool covers(NodeKinds kinds, NodeOpKind kind) {
  return kinds == kAny || (kinds == kMig) == (kind == NodeOpKind::kMig);
}

}  // namespace

std::string_view nodeOpEventName(NodeOpEvent event) {
  static constexpr core::EnumNames<E, 15> kNames{
      {{E::kOrphanTaint, "orphan-taint"},
       {E::kNotMigManaged, "not-mig-managed"},
       {E::kPrepareTimedOut, "prepare-timed-out"},
       {E::kPodInTheWay, "pod-in-the-way"},
       {E::kStepFailed, "step-failed"},
       {E::kConfigPropagating, "config-propagating"},
       {E::kPrepared, "prepared"},
       {E::kLabelChangedByOther, "label-changed-by-other"},
       {E::kOperatorFailed, "operator-failed"},
       {E::kCapacityReady, "capacity-ready"},
       {E::kCapacityReadyThen, "capacity-ready-then-sharing"},
       {E::kStuck, "stuck"},
       {E::kTimedOut, "timed-out"},
       {E::kNoCapacity, "no-capacity"},
       {E::kWaiting, "waiting"}}};
  return core::enumName(kNames, event, "waiting");
}

std::span<const NodeTransition> nodeTransitions() { return kTransitions; }

const NodeTransition* findTransition(NodeOpPhase phase, NodeOpKind kind, NodeOpEvent event) {
  for (const auto& t : kTransitions) {
    if (t.phase == phase && t.event == event && covers(t.kinds, kind)) return &t;
  }
  return nullptr;
}

bool configPropagating(const NodeIntent& intent, TimePoint now, const NodeOpTimeouts& timeouts) {
  return intent.kind == NodeOpKind::kMig && intent.configWritten &&
         now - *intent.configWritten < timeouts.migConfigPropagation;
}

bool prepareTimedOut(const NodeIntent& intent, TimePoint now, const NodeOpTimeouts& timeouts) {
  return now - intent.started > timeouts.allocatable;
}

bool migManaged(const partition::NodeObject& node) {
  return !node.meta.label(k8s::kMigConfigStateLabel).empty();
}

std::optional<NodeIntent> liveIntent(const partition::NodeObject& node) {
  auto intent = decodeNodeIntent(node.meta.annotation(k8s::kIntentAnnotation));
  if (!intent || !nodeIntentOwnedBy(*intent, node.meta.name)) return std::nullopt;
  return intent;
}

bool reshapeTainted(const partition::NodeObject& node) {
  return std::any_of(node.taints.begin(), node.taints.end(),
                     [](const partition::Taint& t) { return t.key == k8s::kReshapeTaint; });
}

NodeOpEvent observeApplied(const NodeIntent& intent, const partition::NodeObject& node,
                           TimePoint now, const NodeOpTimeouts& timeouts) {
  if (node.meta.label(intent.labelKey()) != intent.label) return E::kLabelChangedByOther;
  const auto since = now - intent.applied.value_or(intent.started);
  bool ready = true;
  for (const auto& [resource, n] : intent.expect) {
    auto it = node.allocatable.find(resource);
    ready = ready && (it == node.allocatable.end() ? 0 : it->second) == n;
  }
  if (intent.kind != NodeOpKind::kMig) {
    if (ready) return E::kCapacityReady;
    return since > timeouts.allocatable ? E::kTimedOut : E::kWaiting;
  }
  const std::string state = node.meta.label(k8s::kMigConfigStateLabel);
  if (state == "failed") return E::kOperatorFailed;
  if (state == "success" && ready) return intent.then ? E::kCapacityReadyThen : E::kCapacityReady;
  if (since <= timeouts.mig) return E::kWaiting;
  if (state == "success") return E::kNoCapacity;
  return state == "pending" || state == "rebooting" ? E::kStuck : E::kTimedOut;
}

}  // namespace gpuscale::reconciler
