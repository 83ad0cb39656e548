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
#include "gpuscale/core/flag_args.h"
#include "gpuscale/core/label_selector.h"
#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/rules/loader.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter {
namespace {

using rules::CompiledRule;
using rules::RuleSet;

constexpr int kExitOk = 0;
constexpr int kExitError = 2;

constexpr std::string_view kUsage =
    "usage: gpuscale-adapter rules check FILE\n"
    "       gpuscale-adapter rules render FILE --metric NAME (--resource RES | --external)\n"
    "                        [--namespace NS] [--names a,b,...] [--series SERIES]\n"
    "                        [--metric-selector SELECTOR]\n";

int usageError(std::ostream& err, std::string_view message) {
  err << "gpuscale-adapter rules: " << message << "\n" << kUsage;
  return kExitError;
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

int check(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  if (args.size() != 1) return usageError(err, "check takes exactly one FILE");
  std::shared_ptr<const RuleSet> set = load(std::string(args.front()), err);
  if (!set) return kExitError;
  for (const CompiledRule& rule : set->rules) out << rule.summary() << "\n";
  for (const CompiledRule& rule : set->externalRules) out << rule.summary() << "\n";
  if (set->resourceRules) {
    for (const rules::CompiledResourceRule* rule :
         {&set->resourceRules->cpu, &set->resourceRules->memory}) {
      out << resourceRuleSummary(*rule, set->resourceRules->window) << "\n";
    }
  }
  return kExitOk;
}

std::vector<std::string> splitNames(std::string_view text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    if (comma > start) names.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
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
  std::map<std::string, std::string, std::less<>> flags;
  bool external = false;
};

std::optional<RenderOptions> parseRenderArgs(std::span<const std::string_view> args,
                                             std::ostream& err) {
  static constexpr std::string_view kValueFlags[] = {"metric", "resource", "namespace",
                                                     "names",  "series",   "metric-selector"};
  RenderOptions options;
  core::FlagCallbacks flags;
  flags.isBoolean = [](std::string_view name) { return name == "external"; };
  flags.apply = [&](std::string_view name, std::string_view value) -> core::Result<bool> {
    if (name == "external") {
      options.external = value == "true";
      return true;
    }
    if (std::find(std::begin(kValueFlags), std::end(kValueFlags), name) == std::end(kValueFlags)) {
      return false;
    }
    options.flags[std::string(name)] = std::string(value);
    return true;
  };
  auto rest = core::applyFlags({args.begin(), args.end()}, flags);
  if (!rest) {
    usageError(err, rest.status().message());
    return std::nullopt;
  }
  for (const std::string& arg : *rest) {
    if (arg.starts_with("--")) {
      usageError(err, fmt::format("unknown flag {}", arg.substr(0, arg.find('='))));
      return std::nullopt;
    }
    if (!options.file.empty()) {
      usageError(err, fmt::format("unexpected argument {:?}", arg));
      return std::nullopt;
    }
    options.file = arg;
  }
  if (options.file.empty()) {
    usageError(err, "render needs a FILE");
    return std::nullopt;
  }
  if (!options.flags.count("metric")) {
    usageError(err, "render needs --metric");
    return std::nullopt;
  }
  if (options.external == (options.flags.count("resource") != 0)) {
    usageError(err, "render needs exactly one of --resource and --external");
    return std::nullopt;
  }
  return options;
}

int render(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  std::optional<RenderOptions> options = parseRenderArgs(args, err);
  if (!options) return kExitError;
  auto flag = [&](std::string_view name) {
    auto it = options->flags.find(name);
    return it == options->flags.end() ? std::string() : it->second;
  };
  std::shared_ptr<const RuleSet> set = load(options->file, err);
  if (!set) return kExitError;
  const std::string metric = flag("metric");
  const std::string ns = flag("namespace");

  core::LabelSelector selector;
  if (options->flags.count("metric-selector")) {
    core::Result<core::LabelSelector> parsed = core::LabelSelector::parse(flag("metric-selector"));
    if (!parsed) {
      err << "invalid --metric-selector: " << parsed.status().message() << "\n";
      return kExitError;
    }
    selector = std::move(*parsed);
  }

  k8s::GroupResource resource;
  if (!options->external) {
    core::Result<k8s::ResourceInfo> info = k8s::BuiltinResourceTable::instance().resourceFor(
        k8s::GroupResource::parse(flag("resource")));
    if (!info) {
      err << "invalid --resource: " << info.status().message() << "\n";
      return kExitError;
    }
    resource = info->groupResource;
  }

  const std::vector<CompiledRule>& candidates = options->external ? set->externalRules : set->rules;
  const CompiledRule* chosen = nullptr;
  std::string seriesName;
  for (const CompiledRule& rule : candidates) {
    std::vector<std::string> names = options->flags.count("series")
                                         ? std::vector<std::string>{flag("series")}
                                         : seriesCandidates(rule, metric);
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
                       options->flags.count("series") ? fmt::format("series {:?}", flag("series"))
                                                      : std::string("a series it names"),
                       metric,
                       options->external ? "" : fmt::format(" for {}", resource.toString()));
    if (!options->flags.count("series")) {
      err << "hint: give the Prometheus series name with --series\n";
    }
    return kExitError;
  }

  core::Result<std::string> query = std::string();
  if (options->external) {
    query = chosen->externalQueryFor(seriesName, ns, &selector);
  } else {
    std::vector<std::string> objectNames = splitNames(flag("names"));
    if (objectNames.empty()) {
      err << "render needs at least one object name (--names a,b,...)\n";
      return kExitError;
    }
    rules::QueryRequest request{seriesName, resource, ns, objectNames, &selector, {}};
    query = chosen->queryFor(request);
  }
  if (!query) {
    err << fmt::format("{}: {}: {}\n", options->file, chosen->path(), query.status().message());
    return kExitError;
  }
  out << *query << "\n";
  return kExitOk;
}

}  // namespace

int runRulesCommand(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  if (args.empty()) return usageError(err, "missing subcommand");
  if (args.front() == "check") return check(args.subspan(1), out, err);
  if (args.front() == "render") return render(args.subspan(1), out, err);
  if (args.front() == "-h" || args.front() == "--help") {
    out << kUsage;
    return kExitOk;
  }
  return usageError(err, fmt::format("unknown subcommand {:?}", std::string(args.front())));
}

}  // namespace gpuscale::adapter
