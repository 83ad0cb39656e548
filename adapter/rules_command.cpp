#include "rules_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gpuscale/core/duration.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/subcommands.h"
#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/rules/loader.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter {
namespace {

using rules::CompiledRule;
using rules::RuleSet;

constexpr std::string_view kUsage =
    "usage: gpuscale-adapter rules check FILE\n"
    "       gpuscale-adapter rules render FILE --metric NAME (--resource RES | --external)\n"
    "                        [--namespace NS] [--names a,b,...] [--series SERIES]\n"
    "                        [--metric-selector SELECTOR]\n";

int usageError(std::ostream& err, std::string_view message) {
  err << "gpuscale-adapter rules: " << message << "\n" << kUsage;
  return core::kExitError;
}

// Loads and compiles FILE, printing the error or the warnings.
std::shared_ptr<const RuleSet> load(const std::string& file, std::ostream& err) {
  core::Result<std::shared_ptr<const RuleSet>> set =
      rules::loadRules(file, k8s::BuiltinResourceTable::instance());
  if (!set) {
    err << set.status().message() << "\n";
    return nullptr;
  }
  for (const rules::Diagnostic& warning : (*set)->warnings) {
    rules::Diagnostic shown = warning;
    shown.message = "warning: " + (shown.path.empty() ? "" : shown.path + ": ") + shown.message;
    shown.path.clear();
    err << shown.format(file) << "\n";
  }
  return *set;
}

// The label of `resource` in a resource rule's samples, or why there is none.
std::string labelOrProblem(const rules::CompiledResourceRule& rule,
                           const rules::GroupResource& resource) {
  auto label = rule.resources.labelForResource(resource);
  return label ? fmt::format("{:?}", *label) : "none (" + label.status().message() + ")";
}

// What a resourceRules entry serves: "resourceRules.cpu: metrics.k8s.io/v1beta1 cpu of pods
// (label "pod", namespace label "namespace", containers by "container") and nodes (label "node"),
// window 5m0s".
std::string resourceRuleSummary(const rules::CompiledResourceRule& rule,
                                std::chrono::nanoseconds window) {
  const std::string_view resource = rule.path.ends_with("memory") ? "memory" : "cpu";
  return fmt::format(
      "{}: serves metrics.k8s.io/v1beta1 {} of pods (label {}, namespace label {}, containers by "
      "{:?}) and nodes (label {}), window {}",
      rule.path, resource, labelOrProblem(rule, {"", "pods"}),
      labelOrProblem(rule, rules::namespacesResource()), rule.containerLabel,
      labelOrProblem(rule, {"", "nodes"}), core::formatGoDuration(window));
}

int check(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() != 1) return usageError(err, "check takes exactly one FILE");
  std::shared_ptr<const RuleSet> set = load(std::string(args.front()), err);
  if (!set) return core::kExitError;
  for (const CompiledRule& rule : set->rules) out << rule.summary() << "\n";
  for (const CompiledRule& rule : set->externalRules) out << rule.summary() << "\n";
  if (set->resourceRules) {
    for (const rules::CompiledResourceRule* rule :
         {&set->resourceRules->cpu, &set->resourceRules->memory}) {
      out << resourceRuleSummary(*rule, set->resourceRules->window) << "\n";
    }
  }
  return core::kExitOk;
}

bool isNameChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

// A metric name written literally in the rule, if any: `matches: "^foo_total$"` or the
// seriesQuery's `foo{...}` / `{__name__="foo",...}`.
std::vector<std::string> seriesCandidates(const CompiledRule& rule, std::string_view metric) {
  std::vector<std::string> out;
  std::string_view matches = rule.nameRegex().pattern();
  if (!matches.empty() && matches.front() == '^') matches.remove_prefix(1);
  if (!matches.empty() && matches.back() == '$') matches.remove_suffix(1);
  bool literal = !matches.empty();
  for (size_t i = 0; i < matches.size(); ++i) literal = literal && isNameChar(matches[i], i == 0);
  if (literal) out.emplace_back(matches);
  std::string_view query = rule.seriesQuery();
  size_t length = 0;
  while (length < query.size() && isNameChar(query[length], length == 0)) ++length;
  if (length > 0) out.emplace_back(query.substr(0, length));
  constexpr std::string_view kNameMatcher = "__name__=\"";
  if (size_t at = query.find(kNameMatcher); at != std::string_view::npos) {
    size_t start = at + kNameMatcher.size();
    size_t end = query.find('"', start);
    if (end != std::string_view::npos) out.emplace_back(query.substr(start, end - start));
  }
  out.emplace_back(metric);
  return out;
}

struct RenderOptions {
  std::string file;
  std::string metric;
  std::string resource;
  std::string namespaceName;
  std::string names;
  std::string series;
  std::string metricSelector;
  bool external = false;
};

core::FlagSet renderFlagSet(RenderOptions& options) {
  core::FlagSet flags("gpuscale-adapter rules render",
                      "gpuscale-adapter rules render FILE --metric NAME (--resource RES | "
                      "--external) [flags]",
                      "Prints the PromQL a request for the metric would send, without Prometheus "
                      "(`rules check FILE` validates a rule file and says what each rule serves).");
  flags.addString("metric", &options.metric, "the metric asked for (required)");
  flags.addString("resource", &options.resource, "the resource of a custom metric (pods, ...)");
  flags.addBool("external", &options.external, "an external metric");
  flags.addString("namespace", &options.namespaceName, "the request's namespace");
  flags.addString("names", &options.names, "object names, comma-separated (custom metrics)");
  flags.addString("series", &options.series,
                  "the Prometheus series name (default: one the rule names literally)");
  flags.addString("metric-selector", &options.metricSelector, "the request's metric selector");
  return flags;
}

int render(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RenderOptions parsed;
  core::FlagSet flags = renderFlagSet(parsed);
  std::vector<std::string> rest;
  if (auto exitCode = flags.parseCommand(args, out, err, &rest)) return *exitCode;
  if (rest.size() != 1) {
    return flags.usageError(err, rest.empty() ? "render needs a FILE"
                                              : fmt::format("unexpected argument {:?}", rest[1]));
  }
  parsed.file = rest.front();
  if (!flags.changed("metric")) return flags.usageError(err, "render needs --metric");
  if (parsed.external == flags.changed("resource")) {
    return flags.usageError(err, "render needs exactly one of --resource and --external");
  }
  const RenderOptions* options = &parsed;
  std::shared_ptr<const RuleSet> set = load(options->file, err);
  if (!set) return core::kExitError;
  const std::string metric = options->metric;
  const std::string ns = options->namespaceName;
  const bool seriesGiven = flags.changed("series");

  core::LabelSelector selector;
  if (flags.changed("metric-selector")) {
    core::Result<core::LabelSelector> parsed = core::LabelSelector::parse(options->metricSelector);
    if (!parsed) {
      err << "invalid --metric-selector: " << parsed.status().message() << "\n";
      return core::kExitError;
    }
    selector = std::move(*parsed);
  }

  k8s::GroupResource resource;
  if (!options->external) {
    core::Result<k8s::ResourceInfo> info = k8s::BuiltinResourceTable::instance().resourceFor(
        k8s::GroupResource::parse(options->resource));
    if (!info) {
      err << "invalid --resource: " << info.status().message() << "\n";
      return core::kExitError;
    }
    resource = info->groupResource;
  }

  const std::vector<CompiledRule>& candidates = options->external ? set->externalRules : set->rules;
  const CompiledRule* chosen = nullptr;
  std::string seriesName;
  for (const CompiledRule& rule : candidates) {
    std::vector<std::string> names =
        seriesGiven ? std::vector<std::string>{options->series} : seriesCandidates(rule, metric);
    for (const std::string& series : names) {
      std::string named;
      if (rule.firstFailingFilter(series) >= 0 || !rule.metricNameFor(series, named) ||
          named != metric) {
        continue;
      }
      if (!options->external && !rule.resources().labelForResource(resource).ok()) continue;
      chosen = &rule;
      seriesName = series;
      break;
    }
  }
  if (chosen == nullptr) {
    err << fmt::format("{}: no {} rule turns {} into metric {:?}{}\n", options->file,
                       options->external ? "external" : "custom",
                       seriesGiven ? fmt::format("series {:?}", options->series)
                                   : std::string("a series it names"),
                       metric,
                       options->external ? "" : fmt::format(" for {}", resource.toString()));
    if (!seriesGiven) {
      err << "hint: give the Prometheus series name with --series\n";
    }
    return core::kExitError;
  }

  core::Result<std::string> query = std::string();
  if (options->external) {
    query = chosen->externalQueryFor(seriesName, ns, &selector);
  } else {
    std::vector<std::string> objectNames = core::splitCommaList(options->names);
    if (objectNames.empty()) {
      err << "render needs at least one object name (--names a,b,...)\n";
      return core::kExitError;
    }
    rules::QueryRequest request{seriesName, resource, ns, objectNames, &selector, {}};
    query = chosen->queryFor(request);
  }
  if (!query) {
    err << fmt::format("{}: {}: {}\n", options->file, chosen->path(), query.status().message());
    return core::kExitError;
  }
  out << *query << "\n";
  return core::kExitOk;
}

}  // namespace

std::string renderFlagReference() { return core::markdownOf(renderFlagSet); }

int runRulesCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) return usageError(err, "missing subcommand");
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args.front() == "check") return check(rest, out, err);
  if (args.front() == "render") return render(rest, out, err);
  if (args.front() == "-h" || args.front() == "--help") {
    out << kUsage;
    return core::kExitOk;
  }
  return usageError(err, fmt::format("unknown subcommand {:?}", std::string(args.front())));
}

}  // namespace gpuscale::adapter
