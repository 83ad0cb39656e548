#include "plan_command.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpuscale/core/files.h"
#include "gpuscale/core/flag_args.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/planner.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/reconciler/hpa_state_store.h"

namespace gpuscale::reconciler {
namespace {

namespace partition = gpuscale::partition;

constexpr int kUsageOrInputError = 2;

struct PlanArgs {
  std::string from;
  std::string policyFile;
  std::string output = "json";
  std::optional<partition::TimePoint> now;
};

// The reconciler's state ConfigMap in a dump (a List, an array of them, or objects), by its
// default name in any namespace: its data added to `out`.
void collectState(const nlohmann::json& j, std::map<std::string, std::string>& out) {
  if (j.is_array()) {
    for (const auto& item : j) collectState(item, out);
    return;
  }
  if (!j.is_object()) return;
  if (j.contains("items")) {
    collectState(j["items"], out);
    return;
  }
  const nlohmann::json* meta = j.contains("metadata") ? &j["metadata"] : nullptr;
  if (j.value("kind", "") != "ConfigMap" || meta == nullptr || !meta->is_object() ||
      meta->value("name", "") != StateStoreOptions{}.name || !j.contains("data") ||
      !j["data"].is_object()) {
    return;
  }
  for (const auto& [k, v] : j["data"].items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
}

bool readText(const std::string& path, std::string& text, std::ostream& err) {
  if (path == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    text = buffer.str();
    return true;
  }
  auto content = core::readFile(path);
  if (!content) {
    err << "gpuscale-reconciler plan: cannot read " << path << "\n";
    return false;
  }
  text = std::move(*content);
  return true;
}

std::optional<PlanArgs> parseArgs(const std::vector<std::string>& args, std::ostream& err) {
  PlanArgs parsed;
  core::FlagCallbacks flags;
  flags.apply = [&](std::string_view name, std::string_view value) -> core::Result<bool> {
    if (name == "from") {
      parsed.from = value;
    } else if (name == "policy") {
      parsed.policyFile = value;
    } else if (name == "output") {
      if (value != "json" && value != "text") {
        return core::Status::badRequest("--output must be json or text");
      }
      parsed.output = value;
    } else if (name == "now") {
      parsed.now = core::parseRfc3339(value);
      if (!parsed.now) {
        return core::Status::badRequest(
            "--now must be an RFC 3339 time such as 2026-11-22T00:00:00Z");
      }
    } else {
      return false;
    }
    return true;
  };
  // -o is --output's short form.
  std::vector<std::string> spelled(args);
  for (auto& arg : spelled) {
    if (arg == "-o") arg = "--output";
  }
  auto rest = core::applyFlags(spelled, flags);
  if (!rest) {
    err << "gpuscale-reconciler plan: " << rest.status().message() << "\n";
    return std::nullopt;
  }
  if (!rest->empty()) {
    err << "gpuscale-reconciler plan: unknown flag " << rest->front() << "\n";
    return std::nullopt;
  }
  if (parsed.from.empty()) {
    err << "gpuscale-reconciler plan: --from DUMP.json is required\n";
    return std::nullopt;
  }
  return parsed;
}

}  // namespace

int runPlanCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto parsed = parseArgs(args, err);
  if (!parsed) return kUsageOrInputError;

  partition::PolicySet policies = partition::defaultPolicies();
  if (!parsed->policyFile.empty()) {
    std::string text;
    if (!readText(parsed->policyFile, text, err)) return kUsageOrInputError;
    auto loaded = partition::parsePolicies(text);
    if (!loaded) {
      err << "gpuscale-reconciler plan: " << parsed->policyFile << ": " << loaded.status().message()
          << "\n";
      return kUsageOrInputError;
    }
    policies = std::move(*loaded);
  }

  std::string text;
  if (!readText(parsed->from, text, err)) return kUsageOrInputError;
  nlohmann::json dump = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (dump.is_discarded()) {
    err << "gpuscale-reconciler plan: " << parsed->from << ": not valid JSON\n";
    return kUsageOrInputError;
  }
  auto snapshot = partition::buildSnapshot(dump);
  if (!snapshot) {
    err << "gpuscale-reconciler plan: " << parsed->from << ": " << snapshot.status().message()
        << "\n";
    return kUsageOrInputError;
  }

  // Cooldowns and give-back as the running reconciler sees them, when the dump has its state.
  std::map<std::string, std::string> state;
  collectState(dump, state);
  applyHpaRecords(state, *snapshot);
  // A dump is one look: anticipation sees no trend, only a demand already beyond the ceiling.
  const auto now = parsed->now.value_or(std::chrono::system_clock::now());
  auto workloads = partition::assessWorkloads(*snapshot, policies, now);
  auto plan = partition::planPartitions(*snapshot, workloads, now);
  if (parsed->output == "text") {
    out << partition::planToText(plan);
  } else {
    out << partition::planToJson(plan).dump(2) << "\n";
  }
  return 0;
}

}  // namespace gpuscale::reconciler
