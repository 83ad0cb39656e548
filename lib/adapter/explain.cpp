// explainDiscovery(): the pure per-rule accounting of explain.h. It follows the same steps, in the
// same order, as rules::CustomRegistry / ExternalRegistry::build (registry.cpp), one metric name at
// a time and without the registry's memoisation, so it can say *which* step dropped a name.
#include <fmt/format.h>

#include <map>
#include <set>

#include "gpuscale/adapter/explain.h"
#include "gpuscale/rules/registry.h"
#include "gpuscale/rules/resource_converter.h"

namespace gpuscale::adapter {
namespace {

using k8s::GroupResource;
using rules::CompiledRule;

bool clusterScoped(const GroupResource& gr) {
  return gr.group.empty() && (gr.resource == "namespaces" || gr.resource == "nodes" ||
                              gr.resource == "persistentvolumes");
}

std::string joined(const std::vector<std::string>& items) {
  return items.empty() ? std::string("none") : fmt::format("{}", fmt::join(items, ", "));
}

// What the rule accepts as resource labels, for the no_resource_label detail.
std::string resourceLabelsWanted(const rules::ResourceConverter& resources) {
  std::vector<std::string> labels;
  for (const auto& [label, resource] : resources.overrides()) labels.push_back(label);
  std::string out = "needs a label that maps to a resource";
  if (!labels.empty()) out += ": overrides " + joined(labels);
  if (resources.hasTemplate()) {
    out += (labels.empty() ? ": " : "; ") +
           fmt::format("template {:?}", resources.labelTemplateText());
  }
  return out;
}

std::string filterDetail(const rules::SeriesFilter& filter) {
  return fmt::format("{} {:?}{}", filter.positive ? "is" : "isNot", filter.regex.pattern(),
                     filter.implicit ? " (implicit filter of name.matches)" : "");
}

// Drop groups in first-seen order, keyed by reason and filter.
class DropTally {
 public:
  explicit DropTally(size_t maxExamples) : maxExamples_(maxExamples) {}

  void add(std::string reason, std::string filter, std::string detail, std::string example) {
    const std::string key = reason + "\n" + filter;
    auto it = index_.find(key);
    if (it == index_.end()) {
      it = index_.emplace(key, groups_.size()).first;
      groups_.push_back({std::move(reason), std::move(filter), std::move(detail), 0, {}});
    }
    DroppedNames& group = groups_[it->second];
    ++group.count;
    if (group.examples.size() < maxExamples_) group.examples.push_back(std::move(example));
  }
  std::vector<DroppedNames> take() { return std::move(groups_); }

 private:
  size_t maxExamples_;
  std::map<std::string, size_t> index_;
  std::vector<DroppedNames> groups_;
};

// The resources a custom series registers under, as the registry does; false (and a drop) when
// there is none.
bool resourcesOf(const CompiledRule& rule, const std::string& name,
                 const std::vector<std::string>& labels, DropTally& drops,
                 std::set<std::string>& out) {
  const rules::ResourceConverter& converter = rule.resources();
  std::vector<GroupResource> found;
  bool namespaced = false;
  std::vector<std::string> unknown;
  for (const std::string& label : labels) {
    std::optional<GroupResource> gr = converter.resourceForLabel(label);
    if (gr) {
      found.push_back(*gr);
    } else if (auto candidate = converter.templateCandidate(label)) {
      unknown.push_back(fmt::format("{} → {}", label, candidate->toString()));
    }
    if (!gr || !clusterScoped(*gr)) namespaced = true;
  }
  if (found.empty()) {
    const std::string example = fmt::format("{} (labels: {})", name, joined(labels));
    if (!unknown.empty()) {
      drops.add("unresolvable_resource", "",
                "labels fit the template but name no known resource: " + joined(unknown), example);
    } else {
      drops.add("no_resource_label", "", resourceLabelsWanted(converter), example);
    }
    return false;
  }
  for (const GroupResource& gr : found) {
    const bool keyNamespaced = namespaced && !clusterScoped(gr);
    out.insert(gr.toString() + (keyNamespaced ? "" : " (cluster-scoped)"));
  }
  return true;
}

}  // namespace

RuleExplanation explainDiscovery(const CompiledRule& rule, const prom::MetricLabelNames& names,
                                 const ExplainOptions& options) {
  RuleExplanation out;
  out.path = rule.path();
  out.kind = rule.kind() == rules::RuleKind::kCustom ? "custom" : "external";
  out.backend = rule.backend();
  out.seriesQuery = rule.seriesQuery();
  out.metricsQuery = rule.metricsQuery().text();
  const bool checkNames = rule.metricsQuery().referencesField("Series");
  const bool custom = rule.kind() == rules::RuleKind::kCustom;
  DropTally drops(options.maxExamples);
  std::map<std::string, ProducedMetric> produced;
  std::map<std::string, std::set<std::string>> resources;
  bool related = options.metric.empty() ||
                 out.seriesQuery.find(options.metric) != std::string::npos ||
                 rule.nameAs().find(options.metric) != std::string::npos;

  for (const auto& [name, labels] : names) {
    ++out.names;
    std::string metric;
    const bool named = rule.metricNameFor(name, metric);
    if (!options.metric.empty() &&
        (name == options.metric || (named && metric == options.metric))) {
      related = true;
    }
    const int failing = rule.firstFailingFilter(name);
    if (failing >= 0) {
      const rules::SeriesFilter& filter = rule.filters()[static_cast<size_t>(failing)];
      drops.add("filter", filter.path, filterDetail(filter), name);
      continue;
    }
    if (checkNames && !rules::isClassicMetricName(name)) {
      drops.add("unsafe_name", "",
                "not a classic metric name, so it cannot be pasted into PromQL as .Series", name);
      continue;
    }
    if (!named) {  // unreachable while name.matches is also a filter (registry.cpp says the same)
      drops.add("filter", rule.path() + ".name.matches", "name.matches does not match", name);
      continue;
    }
    std::set<std::string> found;
    if (custom && !resourcesOf(rule, name, labels, drops, found)) continue;
    ++out.kept;
    ProducedMetric& entry = produced[metric];
    entry.metric = metric;
    entry.seriesName = name;  // the last writer wins, as in the registry
    resources[metric].insert(found.begin(), found.end());
  }
  out.dropped = drops.take();
  for (auto& [metric, entry] : produced) {
    entry.resources.assign(resources[metric].begin(), resources[metric].end());
    out.metrics.push_back(std::move(entry));
  }
  out.relevant = related;
  return out;
}

}  // namespace gpuscale::adapter
