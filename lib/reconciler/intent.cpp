#include "gpuscale/reconciler/intent.h"

#include <algorithm>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/config_name.h"

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

std::optional<NodeOpKind> parseKind(const std::string& text) {
  if (text == "mig") return NodeOpKind::kMig;
  if (text == "timeSlicing") return NodeOpKind::kTimeSlicing;
  if (text == "mps") return NodeOpKind::kMps;
  return std::nullopt;
}

std::optional<TimePoint> timeField(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_string()) return std::nullopt;
  return core::parseRfc3339(j[key].get<std::string>());
}

template <typename T, typename Decode>
std::optional<T> decodeJson(std::string_view text, Decode&& decode) {
  if (text.empty() || text.size() > kMaxIntentBytes) return std::nullopt;
  try {
    json j = json::parse(text);
    if (!j.is_object()) return std::nullopt;
    return decode(j);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

// j[key] as integers: absent is empty; anything but integers in range (a float such as 1e300
// would overflow the conversion) is malformed.
std::optional<std::map<std::string, std::int64_t>> countsField(const json& j, const char* key) {
  std::map<std::string, std::int64_t> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_object()) return std::nullopt;
  for (const auto& [name, value] : j[key].items()) {
    if (!value.is_number_integer() ||
        (value.is_number_unsigned() &&
         value.get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    out[name] = value.get<std::int64_t>();
  }
  return out;
}

// `value` as a non-negative int; a float (1e300 would overflow the conversion), a negative or a
// too large number is malformed.
std::optional<int> nonNegativeInt(const json& value) {
  if (!value.is_number_integer()) return std::nullopt;
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      return std::nullopt;
    }
  } else if (value.get<std::int64_t>() < 0 ||
             value.get<std::int64_t>() > std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  return static_cast<int>(value.get<std::int64_t>());
}

// j[key] as a non-negative int: absent is 0.
std::optional<int> countField(const json& j, const char* key) {
  if (!j.contains(key)) return 0;
  return nonNegativeInt(j[key]);
}

std::optional<std::vector<int>> indicesField(const json& j, const char* key) {
  std::vector<int> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_array()) return std::nullopt;
  for (const auto& value : *j.find(key)) {
    auto index = nonNegativeInt(value);
    if (!index) return std::nullopt;
    out.push_back(*index);
  }
  return out;
}

}  // namespace

std::string_view NodeIntent::labelKey() const {
  return kind == NodeOpKind::kMig ? k8s::kMigConfigLabel : k8s::kDevicePluginConfigLabel;
}

std::string_view nodeOpKindName(NodeOpKind kind) {
  switch (kind) {
    case NodeOpKind::kMig:
      return "mig";
    case NodeOpKind::kMps:
      return "mps";
    case NodeOpKind::kTimeSlicing:
      break;
  }
  return "timeSlicing";
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
    auto kind = parseKind(j.value("kind", ""));
    auto started = timeField(j, "started");
    if (!kind || !started) return std::nullopt;
    n.plan = j.value("plan", "");
    n.kind = *kind;
    n.phase = j.value("phase", "") == "applied" ? NodeOpPhase::kApplied : NodeOpPhase::kPrepared;
    n.label = j.value("label", "");
    n.previous = j.value("previous", "");
    n.config = j.value("config", "");
    auto expect = countsField(j, "expect");
    auto gpus = indicesField(j, "gpus");
    if (!expect || !gpus) return std::nullopt;
    n.expect = std::move(*expect);
    n.gpus = std::move(*gpus);
    n.started = *started;
    n.applied = timeField(j, "applied");
    if (j.contains("then") && j["then"].is_object()) {
      const json& t = j["then"];
      auto thenExpect = countsField(t, "expect");
      if (!thenExpect) return std::nullopt;
      n.then =
          TimeSlicingFollowUp{t.value("label", ""), t.value("config", ""), std::move(*thenExpect)};
      if (n.then->label.empty()) return std::nullopt;
    }
    if (n.plan.empty() || n.label.empty()) return std::nullopt;
    return n;
  });
}

std::string encodeNodeOutcome(const NodeOutcome& outcome) {
  nlohmann::ordered_json j{{"plan", outcome.plan},
                           {"kind", nodeOpKindName(outcome.kind)},
                           {"result", outcome.result},
                           {"message", outcome.message},
                           {"at", core::formatRfc3339(outcome.at)}};
  return j.dump();
}

std::optional<NodeOutcome> decodeNodeOutcome(std::string_view text) {
  return decodeJson<NodeOutcome>(text, [](const json& j) -> std::optional<NodeOutcome> {
    NodeOutcome o;
    o.plan = j.value("plan", "");
    o.kind = parseKind(j.value("kind", "")).value_or(NodeOpKind::kMig);
    o.result = j.value("result", "");
    o.message = j.value("message", "");
    o.at = timeField(j, "at").value_or(TimePoint{});
    if (o.plan.empty() || o.result.empty()) return std::nullopt;
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
    auto from = countField(j, "from");
    auto to = countField(j, "to");
    h.plan = j.value("plan", "");
    h.nodes = j.value("nodes", std::vector<std::string>{});
    if (h.plan.empty() || !started || !from || !to || h.nodes.size() > kMaxIntentNodes) {
      return std::nullopt;
    }
    h.from = *from;
    h.to = *to;
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
    auto ceiling = countField(j, "ceiling");
    if (!ceiling) return std::nullopt;
    s.ceiling = *ceiling;
    s.lastAction = j.value("lastAction", "");
    s.reason = j.value("reason", "");
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
