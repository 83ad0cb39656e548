#include "gpuscale/rules/rule_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "gpuscale/core/ascii.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/rules/loader.h"

namespace gpuscale::rules {
namespace {}  // namespace

// Turns parsed rules into CompiledRules, reporting positioned errors and collecting warnings.
class RuleCompiler {
 public:
  RuleCompiler(const RuleConfig& config, const ResourceMapper& mapper, CompileOptions options,
               RuleSet& out)
      : config_(config), mapper_(mapper), options_(options), out_(out) {}

  core::Status compileAll() {
    if (core::Status status = compileBackends(config_, out_.backends); !status.ok()) return status;
    for (const auto& [list, kind] : {std::pair{&config_.rules, RuleKind::kCustom},
                                     std::pair{&config_.externalRules, RuleKind::kExternal}}) {
      for (const DiscoveryRule& rule : *list) {
        CompiledRule compiled;
        if (core::Status status = compile(rule, kind, compiled); !status.ok()) return status;
        (kind == RuleKind::kCustom ? out_.rules : out_.externalRules)
            .push_back(std::move(compiled));
      }
    }
    if (config_.resourceRules) return compileResourceRules(*config_.resourceRules);
    return core::Status();
  }

 private:
  core::Status error(SourcePos pos, const std::string& path, std::string message) const {
    return core::Status::invalid(Diagnostic{pos, path, std::move(message)}.format(config_.file));
  }
  void warn(SourcePos pos, const std::string& path, std::string message) {
    out_.warnings.push_back({pos, path, std::move(message)});
  }

  // The position of byte `offset` inside a string value, when the value is written on one line in
  // the file (plain or quoted without escapes); otherwise the value's own position.
  SourcePos refine(const Located<std::string>& value, size_t offset) const {
    if (value.pos.line <= 0 || offset > value.value.size()) return value.pos;
    std::string_view source = config_.source;
    size_t lineStart = 0;
    for (int line = 1; line < value.pos.line; ++line) {
      lineStart = source.find('\n', lineStart);
      if (lineStart == std::string_view::npos) return value.pos;
      ++lineStart;
    }
    std::string_view line = source.substr(lineStart, source.find('\n', lineStart) - lineStart);
    size_t column = static_cast<size_t>(value.pos.column - 1);
    if (column < line.size() && (line[column] == '"' || line[column] == '\'')) ++column;
    std::string_view prefix = std::string_view(value.value).substr(0, offset);
    if (line.substr(column, prefix.size()) != prefix) return value.pos;
    return {value.pos.line, static_cast<int>(column + offset) + 1};
  }

  core::Status compileTemplate(const Located<std::string>& text, const std::string& path,
                               Template& out) {
    size_t offset = 0;
    core::Result<Template> parsed = Template::parse(text.value, &offset);
    if (!parsed) {
      return error(refine(text, offset), path,
                   fmt::format("unable to parse template: {}", parsed.status().message()));
    }
    for (const Template::FieldRef& ref : parsed->fieldReferences()) {
      if (std::find(std::begin(kQueryFields), std::end(kQueryFields), ref.name) ==
          std::end(kQueryFields)) {
        warn(refine(text, ref.offset), path,
             fmt::format("field .{} does not exist (fields: .Series, .LabelMatchers, "
                         ".LabelValuesByName, .GroupBy, .GroupBySlice); every query will fail",
                         ref.name));
      }
    }
    out = std::move(*parsed);
    return core::Status();
  }

  core::Status compileConverter(const ResourceMapping& mapping, const std::string& path,
                                ResourceConverter& out) {
    std::vector<std::pair<std::string, GroupResource>> overrides;
    for (const ResourceOverride& o : mapping.overrides) {
      overrides.emplace_back(o.label, GroupResource{o.target.group.value, o.target.resource.value});
    }
    std::vector<size_t> unknown;
    auto created = ResourceConverter::create(mapping.labelTemplate.value, overrides, mapper_,
                                             options_.unknownOverridesWarn ? &unknown : nullptr);
    for (size_t index : unknown) {
      const ResourceOverride& o = mapping.overrides[index];
      warn(o.target.resource.present ? o.target.resource.pos : o.pos,
           fmt::format("{}.overrides.{}", path, o.label),
           fmt::format("the cluster does not serve {:?} (yet): label {:?} is ignored until it does",
                       GroupResource{o.target.group.value, o.target.resource.value}.toString(),
                       o.label));
    }
    if (auto* problem = std::get_if<ResourceConverter::Problem>(&created)) {
      if (problem->where == ResourceConverter::Problem::Where::kOverride) {
        const ResourceOverride& o = mapping.overrides[problem->overrideIndex];
        return error(o.target.resource.present ? o.target.resource.pos : o.pos,
                     fmt::format("{}.overrides.{}", path, o.label), problem->message);
      }
      return error(refine(mapping.labelTemplate, problem->offset), path + ".template",
                   problem->message);
    }
    out = std::move(std::get<ResourceConverter>(created));
    return core::Status();
  }

  core::Status compileFilter(const RegexFilter& filter, const std::string& path,
                             std::vector<SeriesFilter>& out) {
    if (filter.is.present && !filter.is.value.empty() && filter.isNot.present &&
        !filter.isNot.value.empty()) {
      return error(filter.pos, path,
                   fmt::format("cannot have both an 'is' ({:?}) and 'isNot' ({:?}) expression in a "
                               "single filter",
                               filter.is.value, filter.isNot.value));
    }
    bool positive = !filter.is.value.empty();
    const Located<std::string>& text = positive ? filter.is : filter.isNot;
    if (text.value.empty()) {
      return error(filter.pos, path, "must have either an 'is' or 'isNot' expression in a filter");
    }
    const std::string fieldPath = path + (positive ? ".is" : ".isNot");
    core::Result<GoRegex> regex = GoRegex::compile(text.value);
    if (!regex) {
      return error(text.pos, fieldPath,
                   fmt::format("unable to compile series filter: {}", regex.status().message()));
    }
    out.push_back({std::move(*regex), positive, false, fieldPath});
    return core::Status();
  }

  void checkExpandTemplate(const DiscoveryRule& rule, const GoRegex& regex) {
    const Located<std::string>& as = rule.name.as;
    for (const ExpandReference& ref : parseExpandReferences(as.value)) {
      bool exists =
          ref.number >= 0 ? ref.number <= regex.captureGroups() : regex.groupIndex(ref.name) >= 0;
      if (exists) continue;
      std::string hint;
      size_t digits = 0;
      while (digits < ref.name.size() && core::isAsciiDigit(ref.name[digits])) ++digits;
      if (!ref.braced && digits > 0 && digits < ref.name.size()) {
        hint = fmt::format(" (write \"${{{}}}{}\" for group {} followed by {:?})",
                           ref.name.substr(0, digits), ref.name.substr(digits),
                           ref.name.substr(0, digits), ref.name.substr(digits));
      }
      warn(refine(as, ref.offset), rule.path + ".name.as",
           fmt::format("{:?} refers to capture group {:?}, which does not exist in {:?}, so it "
                       "expands to \"\"{}",
                       ref.text, ref.name, regex.pattern(), hint));
    }
  }

  core::Status compileName(const DiscoveryRule& rule, CompiledRule& out) {
    const std::string path = rule.path + ".name.matches";
    const Located<std::string>& matches = rule.name.matches;
    core::Result<GoRegex> regex = GoRegex::compile(matches.value.empty() ? ".*" : matches.value);
    if (!regex) {
      return error(matches.pos, path,
                   fmt::format("unable to compile series name match expression: {}",
                               regex.status().message()));
    }
    if (!matches.value.empty()) {
      out.filters_.push_back({*regex, true, true, path});
    }
    out.nameAs_ = rule.name.as.value;
    if (out.nameAs_.empty()) {
      int groups = regex->captureGroups();
      if (groups > 1) {
        return error(matches.pos, path,
                     fmt::format("must specify an 'as' value for name matcher {:?} (it has {} "
                                 "capture groups) associated with series query {:?}",
                                 matches.value, groups, rule.seriesQuery.value));
      }
      out.nameAs_ = groups == 0 ? "$0" : "$1";
    }
    checkExpandTemplate(rule, *regex);
    out.nameRegex_ = std::move(*regex);
    return core::Status();
  }

  core::Status compile(const DiscoveryRule& rule, RuleKind kind, CompiledRule& out) {
    out.kind_ = kind;
    out.path_ = rule.path;
    out.pos_ = rule.pos;
    out.seriesQuery_ = rule.seriesQuery.value;
    out.namespaced_ = rule.resources.namespaced.value;
    if (core::Status status = compileBackendRef(rule, out); !status.ok()) return status;
    if (rule.seriesQuery.value.empty()) {
      warn(rule.seriesQuery.present ? rule.seriesQuery.pos : rule.pos, rule.path + ".seriesQuery",
           "empty seriesQuery: Prometheus rejects it and every relist will fail");
    }
    for (size_t i = 0; i < rule.seriesFilters.size(); ++i) {
      core::Status status = compileFilter(
          rule.seriesFilters[i], fmt::format("{}.seriesFilters[{}]", rule.path, i), out.filters_);
      if (!status.ok()) return status;
    }
    if (core::Status status = compileName(rule, out); !status.ok()) return status;
    if (core::Status status =
            compileConverter(rule.resources, rule.path + ".resources", out.resources_);
        !status.ok()) {
      return status;
    }
    const std::string queryPath = rule.path + ".metricsQuery";
    if (core::Status status = compileTemplate(rule.metricsQuery, queryPath, out.metricsQuery_);
        !status.ok()) {
      return status;
    }
    checkUsability(rule, kind, out);
    return core::Status();
  }

  core::Status compileBackendRef(const DiscoveryRule& rule, CompiledRule& out) const {
    const std::string& name = rule.backend.value;
    if (name.empty() || name == kDefaultBackend) return core::Status();
    for (const BackendSpec& backend : out_.backends) {
      if (backend.name == name) {
        out.backend_ = name;
        return core::Status();
      }
    }
    std::string declared = std::string(kDefaultBackend);
    for (const BackendSpec& backend : out_.backends) declared += ", " + backend.name;
    return error(rule.backend.pos, rule.path + ".backend",
                 fmt::format("unknown backend {:?} (declared: {})", name, declared));
  }

  // True when a label of the rule stands for a namespaced resource (whose queries need a namespace
  // label).
  bool mapsNamespacedResource(const ResourceConverter& converter) const {
    if (converter.hasTemplate()) return true;
    for (const auto& [label, resource] : converter.overrides()) {
      core::Result<ResourceInfo> info = mapper_.resourceFor(resource);
      if (info && info->namespaced) return true;
    }
    return false;
  }

  void checkUsability(const DiscoveryRule& rule, RuleKind kind, const CompiledRule& out) {
    SourcePos queryPos = rule.metricsQuery.present ? rule.metricsQuery.pos : rule.pos;
    const std::string queryPath = rule.path + ".metricsQuery";
    if (rule.metricsQuery.value.empty()) {
      warn(queryPos, queryPath, "empty metricsQuery: every query will fail");
    }
    bool hasNamespaceLabel = out.resources_.labelForResource(namespacesResource()).ok();
    if (kind == RuleKind::kExternal) {
      for (std::string_view field : {"GroupBy", "GroupBySlice"}) {
        if (out.metricsQuery_.referencesField(field)) {
          warn(queryPos, queryPath,
               fmt::format(".{} is always empty for externalRules (write the labels to group by "
                           "yourself)",
                           field));
        }
      }
      if (out.namespaced_ && !hasNamespaceLabel) {
        warn(rule.resources.pos.line > 0 ? rule.resources.pos : rule.pos, rule.path + ".resources",
             "no label for namespaces (no override and no template): requests in a namespace will "
             "fail; add an override for the namespace label or set namespaced: false");
      }
    } else if (!hasNamespaceLabel && mapsNamespacedResource(out.resources_)) {
      warn(rule.pos, rule.path + ".resources",
           "no label for namespaces (no override and no template): queries for namespaced objects "
           "will fail");
    }
  }

  core::Status compileResourceRule(const ResourceRule& rule, CompiledResourceRule& out) {
    out.path = rule.path;
    out.containerLabel = rule.containerLabel.value;
    if (core::Status s =
            compileTemplate(rule.containerQuery, rule.path + ".containerQuery", out.containerQuery);
        !s.ok()) {
      return s;
    }
    if (core::Status s = compileTemplate(rule.nodeQuery, rule.path + ".nodeQuery", out.nodeQuery);
        !s.ok()) {
      return s;
    }
    return compileConverter(rule.resources, rule.path + ".resources", out.resources);
  }

  core::Status compileResourceRules(const ResourceRules& rules) {
    CompiledResourceRules compiled;
    if (core::Status s = compileResourceRule(rules.cpu, compiled.cpu); !s.ok()) return s;
    if (core::Status s = compileResourceRule(rules.memory, compiled.memory); !s.ok()) return s;
    if (rules.window.present && !rules.window.value.empty()) {
      core::Result<core::Duration> window = core::parsePrometheusDuration(rules.window.value);
      if (!window) {
        return error(rules.window.pos, "resourceRules.window",
                     fmt::format("invalid duration: {}", window.status().message()));
      }
      compiled.window = *window;
    }
    out_.resourceRules = std::move(compiled);
    return core::Status();
  }

  const RuleConfig& config_;
  const ResourceMapper& mapper_;
  CompileOptions options_;
  RuleSet& out_;
};

core::Result<std::string> CompiledResourceRule::containerQueryFor(
    std::string_view namespaceName, std::span<const std::string> podNames) const {
  std::vector<std::string> extra;
  if (!containerLabel.empty()) extra.push_back(containerLabel);
  QueryRequest request{"", {"", "pods"}, namespaceName, podNames, nullptr, extra};
  return renderResourceQuery(containerQuery, resources, request);
}

core::Result<std::string> CompiledResourceRule::nodeQueryFor(
    std::span<const std::string> nodeNames) const {
  QueryRequest request{"", {"", "nodes"}, "", nodeNames, nullptr, {}};
  return renderResourceQuery(nodeQuery, resources, request);
}

std::vector<std::string> RuleSet::seriesQueries(RuleKind kind) const {
  std::vector<std::string> out;
  std::set<std::string_view> seen;
  for (const CompiledRule& rule : of(kind)) {
    if (seen.insert(rule.seriesQuery()).second) out.push_back(rule.seriesQuery());
  }
  return out;
}

std::vector<RuleSet::DiscoveryQuery> RuleSet::discoveryQueries(RuleKind kind) const {
  std::vector<DiscoveryQuery> out;
  std::set<std::string> seen;
  for (const CompiledRule& rule : of(kind)) {
    std::string key = rule.discoveryKey();
    if (seen.insert(key).second) out.push_back({key, rule.backend(), rule.seriesQuery()});
  }
  return out;
}

core::Result<std::shared_ptr<const RuleSet>> compileRules(const RuleConfig& config,
                                                          const ResourceMapper& mapper,
                                                          CompileOptions options) {
  auto set = std::make_shared<RuleSet>();
  set->file = config.file;
  RuleCompiler compiler(config, mapper, options, *set);
  if (core::Status status = compiler.compileAll(); !status.ok()) return status;
  return std::shared_ptr<const RuleSet>(std::move(set));
}

core::Result<std::shared_ptr<const RuleSet>> loadRules(const std::string& path,
                                                       const ResourceMapper& mapper) {
  core::Result<RuleConfig> config = loadRuleConfigFile(path);
  if (!config) return config.status();
  return compileRules(*config, mapper);
}

}  // namespace gpuscale::rules
