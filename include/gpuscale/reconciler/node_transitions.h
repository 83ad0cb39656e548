// A node operation as an explicit state machine: what a pass can observe about an operation in
// each phase, and the one transition the table gives for (phase, kind, observation). The executor
// (node_operation.h) performs the transition's writes; nothing else decides where an operation
// goes.
//
// Phases are persisted in the node's intent annotation (intent.h): `prepared` (intent recorded,
// config not yet selected) and `applied` (the config label flipped, waiting for the GPU
// Operator). Kinds: a MIG change, or a sharing change (time-slicing or MPS: the same device-plugin
// config switch). The transitions:
//
//   phase     kind     observation          step       outcome     label     after
//   prepared  mig      PrepareTimedOut      finish     failed      keep      back off, unpause
//   prepared  sharing  PrepareTimedOut      finish     failed      keep      back off
//   prepared  mig      PodInTheWay          finish     aborted     keep      unpause
//   prepared  any      StepFailed           wait       -
//   prepared  any      Prepared             apply      started (label flipped, phase applied)
//   applied   mig      LabelChangedByOther  finish     superseded  keep      unpause
//   applied   sharing  LabelChangedByOther  finish     superseded  keep
//   applied   mig      OperatorFailed       finish     failed      restore   back off, unpause
//   applied   mig      CapacityReady        finish     succeeded   keep
//   applied   mig      CapacityReadyThen    follow-up  succeeded   (the intent becomes its sharing
//                                                                   step, phase prepared)
//   applied   mig      TimedOut             finish     timed out   restore   back off, unpause
//   applied   mig      NoCapacity           finish     timed out   keep      back off, unpause
//   applied   sharing  CapacityReady        finish     succeeded   keep
//   applied   sharing  TimedOut             finish     timed out   restore   back off
//   applied   any      Waiting              wait       -
// "unpause": operand labels nvidia.com/gpu.deploy.* left at paused-for-mig-change are set back
// to "true" unless mig-manager is still pending. Every finish removes the intent, records the
// outcome annotation and removes the reshape taint, in one write.
//
// Stall handling adds observations and rows here, not branches in the executor: a mig-manager
// stuck pending/rebooting past a bound is an applied/mig observation finishing as timed out with
// the label restored; a node whose MIG state nobody reports is a prepared/mig observation
// finishing before the taint; a reshape taint without a live intent is an observation of a node
// with no operation (a phase of its own).
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
  kPrepareTimedOut,      // still prepared past the allocatable timeout
  kPodInTheWay,          // MIG: a GPU user on a GPU to rebuild, seen with the node tainted
  kStepFailed,           // a read or write of this step failed: the next pass tries again
  kPrepared,             // config written (MIG: node tainted, GPUs re-checked): flip the label
  kLabelChangedByOther,  // the label no longer names the operation's config
  kOperatorFailed,       // MIG: mig.config.state=failed
  kCapacityReady,        // (MIG: state success and) allocatable shows what the intent expects
  kCapacityReadyThen,    // the same for a MIG step that carries a sharing follow-up
  kTimedOut,             // no answer within the kind's timeout
  kNoCapacity,           // MIG: state success, but allocatable did not show it within the timeout
  kWaiting,              // nothing yet
};
std::string_view nodeOpEventName(NodeOpEvent event);

enum class NodeKinds { kMig, kSharing, kAny };
enum class NodeStep { kWait, kApply, kFollowUp, kFinish };
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
};

// Every transition, in the order of the table above.
std::span<const NodeTransition> nodeTransitions();
// The transition for `event` of an operation of `kind` in `phase`; nullptr for a combination that
// cannot occur (an observation of the other phase or kind).
const NodeTransition* findTransition(NodeOpPhase phase, NodeOpKind kind, NodeOpEvent event);

struct NodeOpTimeouts {
  std::chrono::seconds mig{600};          // mig-manager's answer and the new allocatable
  std::chrono::seconds allocatable{300};  // a sharing change's allocatable; preparing any change
};

// What an applied operation observes on its node at `now` (from the node's labels and
// allocatable only).
NodeOpEvent observeApplied(const NodeIntent& intent, const partition::NodeObject& node,
                           TimePoint now, const NodeOpTimeouts& timeouts);
// Whether a prepared operation ran out of time to be prepared.
bool prepareTimedOut(const NodeIntent& intent, TimePoint now, const NodeOpTimeouts& timeouts);

}  // namespace gpuscale::reconciler
