// Intent and outcome annotations: what the reconciler is about to do (or did) to a node or an HPA,
// written on the object BEFORE acting, so a restarted or newly elected reconciler resumes an
// operation from where it stands instead of starting it again.
//
// Node annotations (values are compact JSON):
//   gpuscale.io/intent {"plan","kind":"mig"|"timeSlicing"|"mps","phase":"prepared"|"applied",
//                               "label","previous","config","expect":{resource:count},
//                               "started","applied",
//                               "then":{"label","config","expect"}}   (MIG only, optional)
//   gpuscale.io/outcome        {"plan","kind","result":"success"|"failed"|"timeout"|"aborted"|
//                               "superseded","message","at"}
//   gpuscale.io/backoff-until  RFC 3339; the planner leaves the node alone until then
// HPA annotation, informational only (written for humans, never read back to decide anything):
//   gpuscale.io/status         {"ceiling","lastAction","reason","at"}
// The HPA-side intent {"plan","from","to","nodes":[...],"started"} lives in the reconciler's own
// state store (hpa_state_store.h), not on the HPA, which tenants can edit.
//
// Bounds: an annotation or record longer than kMaxIntentBytes decodes as absent, an HPA intent
// naming more than kMaxIntentNodes nodes too, and a node intent is acted on only when
// nodeIntentOwnedBy() holds (names configs the node owns, GPU indices and counts in range).
//
// Thread safety: values; pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::reconciler {

using TimePoint = partition::TimePoint;

inline constexpr std::string_view kPausedForMigChange = "paused-for-mig-change";
inline constexpr std::size_t kMaxIntentBytes = 64 * 1024;
inline constexpr std::size_t kMaxIntentNodes = 256;

// What a node operation changes: the MIG config label, or the device-plugin config label for a
// time-slicing or an MPS change (the same path; the kind names its Events and its lead time).
enum class NodeOpKind { kMig, kTimeSlicing, kMps };
// An operation's phase as its intent records it; kNone is never recorded: it is the phase of a
// node without a live operation in the transition table (node_transitions.h).
enum class NodeOpPhase { kPrepared, kApplied, kNone };

// A time-slicing change that follows a MIG change on the same node in the same plan (the replicas
// apply to the partitions the MIG change creates): the device-plugin config key `label` with
// `config`, proven by allocatable `expect`.
struct TimeSlicingFollowUp {
  std::string label;
  std::string config;
  std::map<std::string, std::int64_t> expect;
  friend bool operator==(const TimeSlicingFollowUp&, const TimeSlicingFollowUp&) = default;
};

// An operation on one node: change the label `labelKey()` from `previous` to `label`, after the
// ConfigMap entry `config` (YAML text) is in place, then wait until allocatable shows `expect`.
// A MIG operation may carry `then`: once the MIG change succeeded, the same operation (same plan)
// continues as that time-slicing change, and only its end is the node's outcome.
struct NodeIntent {
  std::string plan;
  NodeOpKind kind = NodeOpKind::kMig;
  NodeOpPhase phase = NodeOpPhase::kPrepared;
  std::string label;                           // the new label value (config name / key)
  std::string previous;                        // the label value before; "" = the label was absent
  std::string config;                          // the ConfigMap entry to write under `label`
  std::map<std::string, std::int64_t> expect;  // allocatable that proves the change is real
  std::vector<int> gpus;                       // MIG: GPU indices that are rebuilt
  TimePoint started{};
  // MIG: when this step added its config to the mig-parted ConfigMap. mig-manager reads that
  // ConfigMap as a mounted file, which the kubelet refreshes up to about a minute later; the label
  // is flipped only once ActuatorOptions::migConfigPropagation has passed since.
  std::optional<TimePoint> configWritten;
  std::optional<TimePoint> applied;
  std::optional<TimeSlicingFollowUp> then;

  std::string_view labelKey() const;
  friend bool operator==(const NodeIntent&, const NodeIntent&) = default;
};

// How an action ended (a node operation or a maxReplicas change): in the outcome annotation,
// actuation reports and /metrics.
enum class Outcome { kStarted, kSucceeded, kFailed, kTimedOut, kAborted, kSuperseded, kError };
// "started" | "success" | "failed" | "timeout" | "aborted" | "superseded" | "error"
std::string_view outcomeName(Outcome outcome);
std::optional<Outcome> parseOutcome(std::string_view name);

struct NodeOutcome {
  std::string plan;
  NodeOpKind kind = NodeOpKind::kMig;
  Outcome result = Outcome::kSucceeded;  // success | failed | timeout | aborted | superseded
  std::string message;
  TimePoint at{};
  bool succeeded() const { return result == Outcome::kSucceeded; }
};

struct HpaIntent {
  std::string plan;
  int from = 0, to = 0;
  std::vector<std::string> nodes;
  TimePoint started{};
  friend bool operator==(const HpaIntent&, const HpaIntent&) = default;
};

struct HpaStatus {
  int ceiling = 0;
  std::string lastAction;
  std::string reason;
  TimePoint at{};
};

std::string_view nodeOpKindName(NodeOpKind kind);  // "mig" | "timeSlicing" | "mps"

std::string encodeNodeIntent(const NodeIntent& intent);
std::string encodeNodeOutcome(const NodeOutcome& outcome);
std::string encodeHpaIntent(const HpaIntent& intent);
std::string encodeHpaStatus(const HpaStatus& status);

// Decoders return nullopt for a missing or malformed annotation (a malformed one is treated as
// absent: the object is re-planned from its observed state, which the planner checks anyway).
std::optional<NodeIntent> decodeNodeIntent(std::string_view text);
std::optional<NodeOutcome> decodeNodeOutcome(std::string_view text);
std::optional<HpaIntent> decodeHpaIntent(std::string_view text);
std::optional<HpaStatus> decodeHpaStatus(std::string_view text);

// Whether `intent`, read from node `node`, is one the reconciler could have written for it: its
// config names (and its follow-up's) are names this node owns (partition/config_name.h), its GPU
// indices and expected counts are in range. Anything else is ignored, whoever wrote it.
bool nodeIntentOwnedBy(const NodeIntent& intent, std::string_view node);

}  // namespace gpuscale::reconciler
