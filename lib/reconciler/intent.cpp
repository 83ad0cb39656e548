#include "gpuscale/reconciler/intent.h"

#include <algorithm>
#include <array>
#include <utility>

#include "gpuscale/core/enum_names.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/object_fields.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

namespace gpuscale::reconciler {
namespace {

using nlohmann::json;

constexpr int kMaxGpusPerNode = 64;
constexpr std::int64_t kMaxExpected = 1 << 20;

std::string_view phaseName(NodeOpPhase phase) {
  return phase == NodeOpPhase::kApplied ? "applied" : "prepared";
}

constexpr core::EnumNames<NodeOpKind, 3> kKindNames{{
    {NodeOpKind::kMig, "mig"},
    {NodeOpKind::kTimeSlicing, "timeSlicing"},
    {NodeOpKind::kMps, "mps"},
}};

std::optional<NodeOpKind> parseKind(const std::string& text) {
  return core::enumValue(kKindNames, text);
}

namespace fields = partition::fields;

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

// j[key] as an RFC 3339 time; nullopt when absent or unparsable (a field of another type throws).
std::optional<TimePoint> timeField(const json& j, const char* key) {
  return core::parseRfc3339(fields::string(j, key));
}

// Decodes an annotation value: nullopt for empty, oversized or malformed text, or when `decode`
// (which reads through partition/object_fields.h) throws or answers nullopt.
template <typename T, typename Decode>
std::optional<T> decodeJson(std::string_view text, Decode&& decode) {
  if (text.empty() || text.size() > kMaxIntentBytes) return std::nullopt;
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto r = fields::readFields("", [&]() -> std::optional<T> { return decode(j); });
  return r ? *r : std::nullopt;
}

// j[key] as integers: absent is empty; anything but integers in the int64 range (a float such as
// 1e300 would overflow the conversion) is malformed.
std::map<std::string, std::int64_t> countsField(const json& j, const char* key) {
  std::map<std::string, std::int64_t> out;
  for (const auto& [name, value] : fields::object(j, key).items()) {
    out[name] = fields::integerValue(value, name);
  }
  return out;
}

// j[key] as a non-negative int (absent: 0); a float, a negative or a too large number is
// malformed.
int countField(const json& j, const char* key) {
  return static_cast<int>(fields::integer(j, key, 0, 0, kMaxInt));
}

std::vector<int> indicesField(const json& j, const char* key) {
  std::vector<int> out;
  for (const auto& value : fields::array(j, key)) {
    out.push_back(static_cast<int>(fields::integerValue(value, key, 0, kMaxInt)));
  }
  return out;
}

constexpr core::EnumNames<Outcome, 7> kOutcomeNames{{
    {Outcome::kStarted, "started"},
    {Outcome::kSucceeded, "success"},
    {Outcome::kFailed, "failed"},
    {Outcome::kTimedOut, "timeout"},
    {Outcome::kAborted, "aborted"},
    {Outcome::kSuperseded, "superseded"},
    {Outcome::kError, "error"},
}};

}  // namespace

std::string_view outcomeName(Outcome outcome) {
  return core::enumName(kOutcomeNames, outcome, "error");
}

std::optional<Outcome> parseOutcome(std::string_view name) {
  return core::enumValue(kOutcomeNames, name);
}

std::string_view NodeIntent::labelKey() const {
  return kind == NodeOpKind::kMig ? k8s::kMigConfigLabel : k8s::kDevicePluginConfigLabel;
}

std::string_view nodeOpKindName(NodeOpKind kind) {
  return core::enumName(kKindNames, kind, "timeSlicing");
}

std::string encodeNodeIntent(const NodeIntent& intent) {
  nlohmann::ordered_json j{{"plan", intent.plan},
                           {"kind", nodeOpKindName(intent.kind)},
                           {"phase", phaseName(intent.phase)},
                           {"label", intent.label},
                           {"previous", intent.previous},
                           {"config", intent.config},
                           {"expect", intent.expect},
                           {"gpus", intent.gpus},
                           {"started", core::formatRfc3339(intent.started)}};
  if (intent.configWritten) j["configWritten"] = core::formatRfc3339(*intent.configWritten);
  if (intent.applied) j["applied"] = core::formatRfc3339(*intent.applied);
  if (intent.then) {
    j["then"] = {{"label", intent.then->label},
                 {"config", intent.then->config},
                 {"expect", intent.then->expect}};
  }
  return j.dump();
}

std::optional<NodeIntent> decodeNodeIntent(std::string_view text) {
  return decodeJson<NodeIntent>(text, [](const json& j) -> std::optional<NodeIntent> {
    NodeIntent n;
    auto kind = parseKind(fields::string(j, "kind"));
    auto started = timeField(j, "started");
    if (!kind || !started) return std::nullopt;
    n.plan = fields::string(j, "plan");
    n.kind = *kind;
    n.phase =
        fields::string(j, "phase") == "applied" ? NodeOpPhase::kApplied : NodeOpPhase::kPrepared;
    n.label = fields::string(j, "label");
    n.previous = fields::string(j, "previous");
    n.config = fields::string(j, "config");
    n.expect = countsField(j, "expect");
    n.gpus = indicesField(j, "gpus");
    n.started = *started;
    n.configWritten = timeField(j, "configWritten");
    n.applied = timeField(j, "applied");
    if (const json* then = fields::find(j, "then"); then != nullptr && then->is_object()) {
      n.then = TimeSlicingFollowUp{fields::string(*then, "label"), fields::string(*then, "config"),
                                   countsField(*then, "expect")};
      if (n.then->label.empty()) return std::nullopt;
    }
    if (n.plan.empty() || n.label.empty()) return std::nullopt;
    return n;
  });
}

std::string encodeNodeOutcome(const NodeOutcome& outcome) {
  nlohmann::ordered_json j{{"plan", outcome.plan},
                           {"kind", nodeOpKindName(outcome.kind)},
                           {"result", outcomeName(outcome.result)},
                           {"message", outcome.message},
                           {"at", core::formatRfc3339(outcome.at)}};
  return j.dump();
}

std::optional<NodeOutcome> decodeNodeOutcome(std::string_view text) {
  return decodeJson<NodeOutcome>(text, [](const json& j) -> std::optional<NodeOutcome> {
    NodeOutcome o;
    o.plan = fields::string(j, "plan");
    o.kind = parseKind(fields::string(j, "kind")).value_or(NodeOpKind::kMig);
    auto result = parseOutcome(fields::string(j, "result"));
    o.message = fields::string(j, "message");
    o.at = timeField(j, "at").value_or(TimePoint{});
    if (o.plan.empty() || !result) return std::nullopt;
    o.result = *result;
    return o;
  });
}

std::string encodeHpaIntent(const HpaIntent& intent) {
  nlohmann::ordered_json j{{"plan", intent.plan},
                           {"from", intent.from},
                           {"to", intent.to},
                           {"nodes", intent.nodes},
                           {"started", core::formatRfc3339(intent.started)}};
  return j.dump();
}

std::optional<HpaIntent> decodeHpaIntent(std::string_view text) {
  return decodeJson<HpaIntent>(text, [](const json& j) -> std::optional<HpaIntent> {
    HpaIntent h;
    auto started = timeField(j, "started");
    h.plan = fields::string(j, "plan");
    h.nodes = fields::strings(j, "nodes");
    if (h.plan.empty() || !started || h.nodes.size() > kMaxIntentNodes) return std::nullopt;
    h.from = countField(j, "from");
    h.to = countField(j, "to");
    h.started = *started;
    return h;
  });
}

std::string encodeHpaStatus(const HpaStatus& status) {
  nlohmann::ordered_json j{{"ceiling", status.ceiling},
                           {"lastAction", status.lastAction},
                           {"reason", status.reason},
                           {"at", core::formatRfc3339(status.at)}};
  return j.dump();
}

std::optional<HpaStatus> decodeHpaStatus(std::string_view text) {
  return decodeJson<HpaStatus>(text, [](const json& j) -> std::optional<HpaStatus> {
    HpaStatus s;
    s.ceiling = countField(j, "ceiling");
    s.lastAction = fields::string(j, "lastAction");
    s.reason = fields::string(j, "reason");
    s.at = timeField(j, "at").value_or(TimePoint{});
    return s;
  });
}

bool nodeIntentOwnedBy(const NodeIntent& intent, std::string_view node) {
  auto countsInRange = [](const std::map<std::string, std::int64_t>& expect) {
    return std::all_of(expect.begin(), expect.end(),
                       [](const auto& kv) { return kv.second >= 0 && kv.second <= kMaxExpected; });
  };
  if (!partition::isOwnedConfigOf(intent.label, node) || !countsInRange(intent.expect)) {
    return false;
  }
  if (!std::all_of(intent.gpus.begin(), intent.gpus.end(),
                   [](int g) { return g >= 0 && g < kMaxGpusPerNode; })) {
    return false;
  }
  if (intent.then &&
      (intent.kind != NodeOpKind::kMig || !partition::isOwnedConfigOf(intent.then->label, node) ||
       !countsInRange(intent.then->expect))) {
    return false;
  }
  return true;
}

}  // namespace gpuscale::reconciler
