// A node operation as an explicit state machine: what a pass can observe about an operation in
// each phase, and the one transition the table gives for (phase, kind, observation). The executor
// (node_operation.h) performs the transition's writes; nothing else decides where an operation
// goes.
//
// Phases are persisted in the node's intent annotation (intent.h): `prepared` (intent recorded,
// config not yet selected) and `applied` (the config label flipped, waiting for the GPU
// Operator); `none` is a node without a live operation (no intent, or one the reconciler could not
// have written). Kinds: a MIG change, or a sharing change (time-slicing or MPS: the same
// device-plugin config switch). The transitions:
//
//   phase     kind     observation          step       outcome     label     after
//   none      any      OrphanTaint          untaint    -           -         Warning Event
//   prepared  mig      NotMigManaged        finish     aborted     keep      back off
//   prepared  mig      PrepareTimedOut      finish     failed      keep      back off, unpause
//   prepared  sharing  PrepareTimedOut      finish     failed      keep      back off
//   prepared  mig      PodInTheWay          finish     aborted     keep      unpause
//   prepared  any      StepFailed           wait       -
//   prepared  mig      ConfigPropagating    wait       -
//   prepared  any      Prepared             apply      started (label flipped, phase applied)
//   applied   mig      LabelChangedByOther  finish     superseded  keep      unpause
//   applied   sharing  LabelChangedByOther  finish     superseded  keep
//   applied   mig      OperatorFailed       finish     failed      restore   back off, unpause
//   applied   mig      CapacityReady        finish     succeeded   keep
//   applied   mig      CapacityReadyThen    follow-up  succeeded   (the intent becomes its sharing
//                                                                   step, phase prepared)
//   applied   mig      Stuck                finish     timed out   restore   back off, unpause
//   applied   mig      TimedOut             finish     timed out   restore   back off, unpause
//   applied   mig      NoCapacity           finish     timed out   keep      back off, unpause
//   applied   sharing  CapacityReady        finish     succeeded   keep
//   applied   sharing  TimedOut             finish     timed out   restore   back off
//   applied   any      Waiting              wait       -
// The stalls among them, as the metric's `cause`: OrphanTaint orphan_taint, NotMigManaged
// mig_manager_absent, PrepareTimedOut prepare_timeout, OperatorFailed mig_manager_failed, Stuck
// mig_manager_stuck, TimedOut (MIG) mig_manager_silent, NoCapacity and TimedOut (sharing)
// no_capacity.
// "unpause": operand labels nvidia.com/gpu.deploy.* left at paused-for-mig-change are set back
// to "true" unless mig-manager is still pending or rebooting (it owns them while it runs). Every
// finish removes the intent, records the outcome annotation and removes the reshape taint, in one
// write. A transition with a stall cause is a stall undone: the actuation report names the cause
// (gpuscale_reconciler_node_stalls_total{cause}), and its Event is a Warning.
//
// The stalls and their bounds: a reshape taint without a live intent (the reconciler stopped
// mid-step, or someone removed the intent) is removed on the next pass, the first one after a
// start included; a node whose MIG state nobody reports (no mig-manager: no
// nvidia.com/mig.config.state label, or an empty one) is never tainted (the planner does not
// reshape it either: partition/why_not.h MigNotManaged); a mig-manager stuck pending or rebooting,
// or not answering at all, past NodeOpTimeouts::mig, or answering `failed`, has the previous label
// restored and the node backs off.
//
// Thread safety: pure functions over constant data.
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string_view>

#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/reconciler/intent.h"

namespace gpuscale::reconciler {

enum class NodeOpEvent {
  kOrphanTaint,          // no live operation, but the node carries the reshape taint
  kNotMigManaged,        // MIG: no mig-manager reports nvidia.com/mig.config.state on the node
  kPrepareTimedOut,      // still prepared past the allocatable timeout
  kPodInTheWay,          // MIG: a GPU user on a GPU to rebuild, seen with the node tainted
  kStepFailed,           // a read or write of this step failed: the next pass tries again
  kConfigPropagating,    // MIG: the config went into the ConfigMap less than the propagation
                         // delay ago; mig-manager's mounted file may not show it yet
  kPrepared,             // config written (MIG: node tainted, GPUs re-checked): flip the label
  kLabelChangedByOther,  // the label no longer names the operation's config
  kOperatorFailed,       // MIG: mig.config.state=failed
  kCapacityReady,        // (MIG: state success and) allocatable shows what the intent expects
  kCapacityReadyThen,    // the same for a MIG step that carries a sharing follow-up
  kStuck,                // MIG: mig-manager still pending or rebooting past the timeout
  kTimedOut,             // no answer within the kind's timeout (MIG: not pending, rebooting,
                         // failed or success)
  kNoCapacity,           // MIG: state success, but allocatable did not show it within the timeout
  kWaiting,              // nothing yet
};
std::string_view nodeOpEventName(NodeOpEvent event);

enum class NodeKinds { kMig, kSharing, kAny };
enum class NodeStep { kWait, kApply, kFollowUp, kFinish, kRemoveTaint };
enum class LabelOnFinish { kKeep, kRestorePrevious };
enum class Backoff { kNone, kBackOff };
enum class Operands { kLeave, kUnpause };

struct NodeTransition {
  std::string_view name;  // "<phase>/<kind>/<observation>", for tests and logs
  NodeOpPhase phase;
  NodeKinds kinds;
  NodeOpEvent event;
  NodeStep step;
  Outcome outcome = Outcome::kStarted;  // of a finish or a follow-up
  LabelOnFinish label = LabelOnFinish::kKeep;
  Backoff backoff = Backoff::kNone;
  Operands operands = Operands::kLeave;
  // The stall this transition undoes, as the metric's `cause` label; "" for none.
  std::string_view stall = {};
};

// Every transition, in the order of the table above.
std::span<const NodeTransition> nodeTransitions();
// The transition for `event` of an operation of `kind` in `phase`; nullptr for a combination that
// cannot occur (an observation of the other phase or kind).
const NodeTransition* findTransition(NodeOpPhase phase, NodeOpKind kind, NodeOpEvent event);

struct NodeOpTimeouts {
  std::chrono::seconds mig{600};          // mig-manager's answer and the new allocatable
  std::chrono::seconds allocatable{300};  // a sharing change's allocatable; preparing any change
  std::chrono::seconds migConfigPropagation{0};  // from a config written to its label flip
};

// What an applied operation observes on its node at `now` (from the node's labels and
// allocatable only).
NodeOpEvent observeApplied(const NodeIntent& intent, const partition::NodeObject& node,
                           TimePoint now, const NodeOpTimeouts& timeouts);
// Whether a prepared MIG operation still waits for the config it wrote to reach mig-manager's file.
bool configPropagating(const NodeIntent& intent, TimePoint now, const NodeOpTimeouts& timeouts);
// Whether a prepared operation ran out of time to be prepared.
bool prepareTimedOut(const NodeIntent& intent, TimePoint now, const NodeOpTimeouts& timeouts);
// Whether `node` reports a MIG state (nvidia.com/mig.config.state set and not empty): some
// mig-manager runs there. Without one a MIG change would never be answered.
bool migManaged(const partition::NodeObject& node);
// The live operation of `node`: its intent annotation when it decodes and is one the reconciler
// could have written for the node (intent.h: nodeIntentOwnedBy); nullopt otherwise.
std::optional<NodeIntent> liveIntent(const partition::NodeObject& node);
// Whether `node` carries the reshape taint (k8s::kReshapeTaint).
bool reshapeTainted(const partition::NodeObject& node);

}  // namespace gpuscale::reconciler
