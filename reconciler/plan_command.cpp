#include "plan_command.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpuscale/core/files.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/core/subcommands.h"
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

core::FlagSet planFlagSet(PlanArgs& parsed) {
  core::FlagSet flags(
      "gpuscale-reconciler plan", "gpuscale-reconciler plan --from DUMP.json [flags]",
      "Reads a `kubectl get nodes,pods,hpa,deployments,configmaps -A -o json` "
      "dump and prints the partition plan. Without --policy the built-in policy \"default\" "
      "applies to HPAs annotated gpuscale.io/partition-policy: default.");
  flags.addString("from", &parsed.from, "the dump (\"-\" for stdin; required)");
  addPolicyFileFlag(flags, &parsed.policyFile, "default: the built-in \"default\"");
  addOutputFlag(flags, &parsed.output);
  addNowFlag(flags, &parsed.now);
  return flags;
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

void addOutputFlag(core::FlagSet& flags, std::string* output) {
  flags
      .addChoice("output", output, "json or text",
                 {{"json", std::string("json")}, {"text", std::string("text")}})
      .shorthand('o')
      .alias("o");
}

void addNowFlag(core::FlagSet& flags, std::optional<partition::TimePoint>* now) {
  flags
      .addCustom("now", "time", "the time planned for, RFC 3339 (2026-11-22T00:00:00Z)",
                 [now](std::string_view value) {
                   *now = core::parseRfc3339(value);
                   if (!*now) return core::Status::badRequest("must be an RFC 3339 time");
                   return core::Status();
                 })
      .defaultText("now");
}

void addPolicyFileFlag(core::FlagSet& flags, std::string* path, std::string_view withoutIt) {
  flags
      .addString("policy", path,
                 "partition policy file (docs/generated/policy.md; " + std::string(withoutIt) + ")")
      .deprecatedName("config");
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
  for (const std::string& warning : loaded->warnings) {
    err << "gpuscale-reconciler: " << path << ": warning: " << warning << "\n";
  }
  return std::move(*loaded);
}

namespace {

int runPlan(PlanArgs& planArgs, const core::FlagSet& flags, std::ostream& out, std::ostream& err) {
  if (planArgs.from.empty()) return flags.usageError(err, "--from DUMP.json is required");
  const PlanArgs* parsed = &planArgs;

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

}  // namespace

core::CommandHandler planCommand() { return core::flagCommand(planFlagSet, runPlan); }

}  // namespace gpuscale::reconciler
