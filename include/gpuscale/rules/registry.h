// Discovery, the pure part: given the compiled rules and the series Prometheus returned for each
// distinct seriesQuery, build the immutable registries the providers serve from
// (prometheus-adapter's basicSeriesRegistry.SetSeries and the external lister), plus per-rule
// statistics for "explain".
//
// Custom registry: for every series of every custom rule (rule order, then series order) that
// passes the rule's filters, the metric name (namer.h) is registered for every group-resource its
// labels associate with (resource_converter.h). Key = (group-resource, namespaced, metric) →
// (series name, rule); a later writer overwrites an earlier one. `namespaced` is
// prometheus-adapter's flag: true as soon as the series has a label that maps to anything other
// than namespaces, nodes or persistentvolumes (an unmapped label such as `job` counts); entries for
// those three resources are always registered as not namespaced. External registry: metric name →
// (series name, rule), last writer wins.
//
// Only label *names* matter for discovery, so a Series carries names only; callers may collapse
// series with the same name and label names into one (set `count` to keep the statistics honest).
//
// Deliberate difference: when a rule's metricsQuery uses .Series, series whose name is not a
// classic Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) are skipped (and counted), because
// pasting such a name into PromQL would change the query.
//
// Entries are sorted (group, resource, namespaced, metric) so lists are deterministic, unlike
// prometheus-adapter's random map order.
//
// Thread safety: registries are immutable after build(); share them as std::shared_ptr<const T> and
// swap the pointer atomically on relist.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/k8s/custom_metric_info.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::rules {

using LabelNames = std::vector<std::string>;

// A series as discovery needs it. The label names are shared: a Prometheus response has few
// distinct label name sets, so a caller should intern them (withLabels()); consecutive series
// sharing one set are also what makes building fast.
struct Series {
  Series(std::string seriesName, LabelNames labelNames, size_t seriesCount = 1)
      : name(std::move(seriesName)),
        labels(std::make_shared<const LabelNames>(std::move(labelNames))),
        count(seriesCount) {}
  static Series withLabels(std::string seriesName, std::shared_ptr<const LabelNames> labelNames,
                           size_t seriesCount = 1) {
    Series s(std::move(seriesName), LabelNames{}, seriesCount);
    s.labels = std::move(labelNames);
    return s;
  }

  std::string name;                          // __name__
  std::shared_ptr<const LabelNames> labels;  // the other label names; never null
  size_t count = 1;  // how many series this one stands for (statistics only)
};

// CompiledRule::discoveryKey() (the seriesQuery, prefixed by the backend for rules that name one)
// → the series the backend returned for it (in Prometheus' order).
using SeriesByQuery = std::map<std::string, std::vector<Series>, std::less<>>;

struct RuleStats {
  std::string path;
  size_t series = 0;                    // returned by the rule's seriesQuery
  std::vector<size_t> droppedByFilter;  // per filter, in CompiledRule::filters() order
  size_t droppedUnsafeName = 0;         // name not usable in .Series (see above)
  size_t droppedNoResource = 0;         // custom rules: no label maps to a resource
  size_t matched = 0;                   // registered (before overwrites)
  size_t entries = 0;                   // registry entries this rule owns in the end
};

using CustomMetricInfo = k8s::CustomMetricInfo;

struct CustomEntry {
  CustomMetricInfo info;
  std::string seriesName;
  const CompiledRule* rule = nullptr;
};

struct ExternalEntry {
  std::string metric;
  std::string seriesName;
  const CompiledRule* rule = nullptr;
};

class CustomRegistry {
 public:
  // Every custom rule's seriesQuery must be a key of `series` (else Status::internal).
  static core::Result<std::shared_ptr<const CustomRegistry>> build(
      std::shared_ptr<const RuleSet> rules, const SeriesByQuery& series);

  const std::vector<CustomEntry>& entries() const { return entries_; }
  // Exact lookup; `resource` must be normalised. Null when absent.
  const CustomEntry* find(const GroupResource& resource, bool namespaced,
                          std::string_view metric) const;
  const std::vector<RuleStats>& ruleStats() const { return stats_; }
  const RuleSet& rules() const { return *rules_; }

 private:
  std::shared_ptr<const RuleSet> rules_;
  std::vector<CustomEntry> entries_;
  std::vector<RuleStats> stats_;
};

class ExternalRegistry {
 public:
  static core::Result<std::shared_ptr<const ExternalRegistry>> build(
      std::shared_ptr<const RuleSet> rules, const SeriesByQuery& series);

  const std::vector<ExternalEntry>& entries() const { return entries_; }  // sorted by metric
  const ExternalEntry* find(std::string_view metric) const;
  const std::vector<RuleStats>& ruleStats() const { return stats_; }
  const RuleSet& rules() const { return *rules_; }

 private:
  std::shared_ptr<const RuleSet> rules_;
  std::vector<ExternalEntry> entries_;
  std::vector<RuleStats> stats_;
};

// True for [a-zA-Z_:][a-zA-Z0-9_:]*.
bool isClassicMetricName(std::string_view name);

}  // namespace gpuscale::rules
