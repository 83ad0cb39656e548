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
#include "gpuscale/partition/policy.h"
#include "gpuscale/reconciler/hpa_state_store.h"
#include "gpuscale/reconciler/pass.h"

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
  auto rest = core::applyFlags(withLongOutputFlag(args), flags);
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

bool readInput(const std::string& path, std::string& text, std::ostream& err) {
  if (path == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    text = buffer.str();
    return true;
  }
  auto content = core::readFile(path);
  if (!content) {
    err << "gpuscale-reconciler: cannot read " << path << "\n";
    return false;
  }
  text = std::move(*content);
  return true;
}

std::vector<std::string> withLongOutputFlag(std::vector<std::string> args) {
  for (auto& arg : args) {
    if (arg == "-o") arg = "--output";
  }
  return args;
}

std::optional<partition::PolicySet> loadPolicies(const std::string& path, std::ostream& err) {
  if (path.empty()) return partition::defaultPolicies();
  std::string text;
  if (!readInput(path, text, err)) return std::nullopt;
  auto loaded = partition::parsePolicies(text);
  if (!loaded) {
    err << "gpuscale-reconciler: " << path << ": " << loaded.status().message() << "\n";
    return std::nullopt;
  }
  return std::move(*loaded);
}

int runPlanCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto parsed = parseArgs(args, err);
  if (!parsed) return kUsageOrInputError;

  auto policies = loadPolicies(parsed->policyFile, err);
  if (!policies) return kUsageOrInputError;

  std::string text;
  if (!readInput(parsed->from, text, err)) return kUsageOrInputError;
  nlohmann::json dump = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (dump.is_discarded()) {
    err << "gpuscale-reconciler plan: " << parsed->from << ": not valid JSON\n";
    return kUsageOrInputError;
  }
  // The controller's own pass: cooldowns, give-back and raises in flight as the running
  // reconciler recorded them when the dump has its state ConfigMap, and nodes with an operation in
  // flight held. A dump is one look: anticipation sees no trend, only a demand already beyond the
  // ceiling.
  PassInputs in;
  in.policies = &*policies;
  in.now = parsed->now.value_or(std::chrono::system_clock::now());
  auto pass = runPassOnDump(dump, in, StateStoreOptions{}.name);
  if (!pass) {
    err << "gpuscale-reconciler plan: " << parsed->from << ": " << pass.status().message() << "\n";
    return kUsageOrInputError;
  }
  for (const auto& s : pass->snapshot.skipped) {
    err << "gpuscale-reconciler plan: planned as if absent: " << s.kind << " "
        << (s.ns.empty() ? s.name : s.ns + "/" + s.name) << ": " << s.message << "\n";
  }
  const partition::Plan& plan = pass->plan;
  if (parsed->output == "text") {
    out << partition::planToText(plan);
  } else {
    out << partition::planToJson(plan).dump(2) << "\n";
  }
  return 0;
}

}  // namespace gpuscale::reconciler
