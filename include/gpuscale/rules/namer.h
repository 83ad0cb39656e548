// A compiled discovery rule (one entry of `rules` or `externalRules`): prometheus-adapter's
// metricNamer.
//
//  - filters(): the `seriesFilters` in file order, then the implicit filter `is: <name.matches>`
//  when
//    `matches` is set (series whose name does not match the naming regex are dropped, not named
//    ""). Filters match the series *name*, unanchored (Go regexp.MatchString). All must pass.
//  - metricNameFor(): Go `re.ExpandString(as, name, re.FindStringSubmatchIndex(name))` with
//  `matches`
//    (default ".*") and `as` (default "$0" without capture groups, "$1" with one; more needs `as`).
//    The result is only the expanded `as`, never a substitution into the series name.
//  - resources(): label ↔ group-resource association (resource_converter.h).
//  - queryFor() / externalQueryFor(): the `metricsQuery` template with .Series, .LabelMatchers,
//    .LabelValuesByName, .GroupBy, .GroupBySlice (see label_matchers.h for the matchers). An empty
//    result or a template execution error is an error value.
//
// Thread safety: immutable after compilation; every method is const and thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/result.h"
#include "gpuscale/rules/config.h"
#include "gpuscale/rules/go_regexp.h"
#include "gpuscale/rules/resource_converter.h"
#include "gpuscale/rules/template.h"

namespace gpuscale::rules {

enum class RuleKind { kCustom, kExternal };

struct SeriesFilter {
  GoRegex regex;
  bool positive = true;   // `is` (must match) or `isNot` (must not match)
  bool implicit = false;  // the filter added for name.matches
  std::string path;       // "rules[2].seriesFilters[0].isNot" or "rules[2].name.matches"

  bool passes(std::string_view seriesName) const { return regex.matches(seriesName) == positive; }
};

// A request for the PromQL of a custom metric.
struct QueryRequest {
  std::string_view seriesName;         // the registered series' __name__ (.Series)
  GroupResource resource;              // normalised (plural) resource the metric describes
  std::string_view namespaceName;      // "" for root-scoped objects
  std::span<const std::string> names;  // object names; at least one unless anyName
  const core::LabelSelector* metricSelector = nullptr;  // metricLabelSelector, may be null
  std::span<const std::string> extraGroupBy;            // resource metrics: the container label
  // Select every object instead of listing names: the resource matcher becomes `label!=""` (and
  // .LabelValuesByName gives ".+"). For wildcard requests over many objects (thousands of pods) the
  // caller keeps the query small and filters the returned samples by name itself. Not a
  // prometheus-adapter mode.
  bool anyName = false;
};

// The fields a metricsQuery template can read.
inline constexpr std::string_view kQueryFields[] = {"Series", "LabelMatchers", "LabelValuesByName",
                                                    "GroupBy", "GroupBySlice"};

// Renders `tmpl` for a custom-style query (matchers: selector, namespace, resource; group by the
// resource label plus extraGroupBy). Shared by discovery rules and resourceRules.
core::Result<std::string> renderResourceQuery(const Template& tmpl,
                                              const ResourceConverter& resources,
                                              const QueryRequest& request);

class CompiledRule {
 public:
  CompiledRule() = default;

  RuleKind kind() const { return kind_; }
  const std::string& path() const { return path_; }
  SourcePos pos() const { return pos_; }
  const std::string& seriesQuery() const { return seriesQuery_; }
  const std::vector<SeriesFilter>& filters() const { return filters_; }
  const GoRegex& nameRegex() const { return nameRegex_; }
  // The effective `as` (after defaulting).
  const std::string& nameAs() const { return nameAs_; }
  const ResourceConverter& resources() const { return resources_; }
  const Template& metricsQuery() const { return metricsQuery_; }
  // `resources.namespaced` (external rules: whether the namespace matcher is added).
  bool namespaced() const { return namespaced_; }
  // The backend the rule queries (backend.h: "default" unless the rule names one).
  const std::string& backend() const { return backend_; }
  // The key of the rule's discovery result in a SeriesByQuery (registry.h): the seriesQuery for
  // rules of the default backend, so that the same query asked of two backends stays two keys.
  std::string discoveryKey() const;

  // Index of the first filter `seriesName` fails, or -1 when it passes them all.
  int firstFailingFilter(std::string_view seriesName) const;
  // The API metric name for a series name; false when `matches` does not match it.
  bool metricNameFor(std::string_view seriesName, std::string& out) const;

  core::Result<std::string> queryFor(const QueryRequest& request) const;
  // External metrics: selector matchers, then the namespace matcher when the rule is namespaced and
  // `namespaceName` is non-empty; .GroupBy is "" and .GroupBySlice is [].
  core::Result<std::string> externalQueryFor(std::string_view seriesName,
                                             std::string_view namespaceName,
                                             const core::LabelSelector* metricSelector) const;

  // One line for `rules check`.
  std::string summary() const;

 private:
  friend class RuleCompiler;

  RuleKind kind_ = RuleKind::kCustom;
  std::string path_;
  SourcePos pos_;
  std::string seriesQuery_;
  std::vector<SeriesFilter> filters_;
  GoRegex nameRegex_;
  std::string nameAs_;
  ResourceConverter resources_;
  Template metricsQuery_;
  bool namespaced_ = true;
  std::string backend_ = "default";
};

}  // namespace gpuscale::rules
