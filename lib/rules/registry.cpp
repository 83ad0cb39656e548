#include "gpuscale/rules/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace gpuscale::rules {
namespace {

constexpr int kNoResource = -1;

// Per-rule memo of what a series name turns into.
struct NameOutcome {
  int failingFilter = -1;  // -1: passes
  bool unsafe = false;
  int metric = -1;  // interned metric id
};

// Interns strings (metric names) and group-resources to small integer ids.
class Interner {
 public:
  int metric(const std::string& name) {
    auto [it, inserted] = metricIds_.emplace(name, static_cast<int>(metrics_.size()));
    if (inserted) metrics_.push_back(name);
    return it->second;
  }
  int resource(const GroupResource& gr) {
    auto [it, inserted] = resourceIds_.emplace(gr, static_cast<int>(resources_.size()));
    if (inserted) resources_.push_back(gr);
    return it->second;
  }
  const std::string& metricName(int id) const { return metrics_[static_cast<size_t>(id)]; }
  const GroupResource& groupResource(int id) const { return resources_[static_cast<size_t>(id)]; }

 private:
  std::unordered_map<std::string, int> metricIds_;
  std::vector<std::string> metrics_;
  std::map<GroupResource, int> resourceIds_;
  std::vector<GroupResource> resources_;
};

// Runs one rule's filters and naming over its series, remembering the outcome per distinct name.
class RuleScan {
 public:
  RuleScan(const CompiledRule& rule, Interner& interner, RuleStats& stats)
      : rule_(rule),
        interner_(interner),
        stats_(stats),
        checkNames_(rule.metricsQuery().referencesField("Series")) {
    stats_.path = rule.path();
    stats_.droppedByFilter.assign(rule.filters().size(), 0);
  }

  // The metric id for `series`, or -1 when it is dropped (and counted).
  int metricFor(const Series& series) {
    stats_.series += series.count;
    if (last_ == nullptr || last_->first != series.name) {
      auto it = names_.find(series.name);
      if (it == names_.end()) it = names_.emplace(series.name, evaluate(series.name)).first;
      last_ = &*it;
    }
    const NameOutcome& outcome = last_->second;
    if (outcome.failingFilter >= 0) {
      stats_.droppedByFilter[static_cast<size_t>(outcome.failingFilter)] += series.count;
      return -1;
    }
    if (outcome.unsafe) {
      stats_.droppedUnsafeName += series.count;
      return -1;
    }
    return outcome.metric;
  }

 private:
  NameOutcome evaluate(const std::string& name) {
    NameOutcome outcome;
    outcome.failingFilter = rule_.firstFailingFilter(name);
    if (outcome.failingFilter >= 0) return outcome;
    if (checkNames_ && !isClassicMetricName(name)) {
      outcome.unsafe = true;
      return outcome;
    }
    std::string metric;
    if (!rule_.metricNameFor(name, metric)) {
      // Unreachable while name.matches is also a filter; kept so a future change cannot register
      // "".
      outcome.failingFilter = static_cast<int>(rule_.filters().size()) - 1;
      if (outcome.failingFilter < 0) outcome.unsafe = true;
      return outcome;
    }
    outcome.metric = interner_.metric(metric);
    return outcome;
  }

  const CompiledRule& rule_;
  Interner& interner_;
  RuleStats& stats_;
  bool checkNames_;
  std::unordered_map<std::string, NameOutcome> names_;
  const std::pair<const std::string, NameOutcome>* last_ = nullptr;
};

// Maps a series' label names to resource ids and the namespaced flag, memoised per label name and
// reusing the previous answer when consecutive series have the same label names (the common case).
class ResourceScan {
 public:
  ResourceScan(const ResourceConverter& converter, Interner& interner)
      : converter_(converter), interner_(interner) {}

  void resolve(const std::vector<std::string>& labels, std::vector<int>& resources,
               bool& namespaced) {
    if (lastLabels_ != nullptr && *lastLabels_ == labels) {
      resources = lastResources_;
      namespaced = lastNamespaced_;
      return;
    }
    resources.clear();
    namespaced = false;
    for (const std::string& label : labels) {
      auto it = cache_.find(label);
      if (it == cache_.end()) it = cache_.emplace(label, lookup(label)).first;
      const int id = it->second;
      if (id != kNoResource) resources.push_back(id);
      if (!clusterScoped(id)) namespaced = true;
    }
    lastLabels_ = &labels;
    lastResources_ = resources;
    lastNamespaced_ = namespaced;
  }

  bool clusterScoped(int id) const {
    return id != kNoResource && static_cast<size_t>(id) < clusterScoped_.size() &&
           clusterScoped_[static_cast<size_t>(id)];
  }

 private:
  int lookup(const std::string& label) {
    std::optional<GroupResource> gr = converter_.resourceForLabel(label);
    if (!gr) return kNoResource;
    int id = interner_.resource(*gr);
    if (clusterScoped_.size() <= static_cast<size_t>(id)) clusterScoped_.resize(id + 1, false);
    clusterScoped_[static_cast<size_t>(id)] =
        gr->group.empty() && (gr->resource == "namespaces" || gr->resource == "nodes" ||
                              gr->resource == "persistentvolumes");
    return id;
  }

  const ResourceConverter& converter_;
  Interner& interner_;
  std::unordered_map<std::string, int> cache_;
  std::vector<bool> clusterScoped_;
  const LabelNames* lastLabels_ = nullptr;
  std::vector<int> lastResources_;
  bool lastNamespaced_ = false;
};

struct EntryRef {
  uint32_t rule = 0;
  const std::string* seriesName = nullptr;
};

uint64_t entryKey(int resource, bool namespaced, int metric) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(resource)) << 33) |
         (static_cast<uint64_t>(namespaced) << 32) | static_cast<uint32_t>(metric);
}

const std::vector<Series>* seriesOf(const SeriesByQuery& series, const CompiledRule& rule) {
  auto it = series.find(rule.discoveryKey());
  return it == series.end() ? nullptr : &it->second;
}

core::Status missingQuery(const CompiledRule& rule) {
  return core::Status::internal(fmt::format("no series given for the seriesQuery {:?} of {}",
                                            rule.seriesQuery(), rule.path()));
}

}  // namespace

bool isClassicMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

core::Result<std::shared_ptr<const CustomRegistry>> CustomRegistry::build(
    std::shared_ptr<const RuleSet> rules, const SeriesByQuery& series) {
  auto registry = std::make_shared<CustomRegistry>();
  Interner interner;
  std::unordered_map<uint64_t, EntryRef> entries;
  const std::vector<CompiledRule>& list = rules->rules;
  registry->stats_.resize(list.size());
  std::vector<int> resources;
  for (size_t r = 0; r < list.size(); ++r) {
    const CompiledRule& rule = list[r];
    const std::vector<Series>* input = seriesOf(series, rule);
    if (input == nullptr) return missingQuery(rule);
    RuleStats& stats = registry->stats_[r];
    RuleScan names(rule, interner, stats);
    ResourceScan scan(rule.resources(), interner);
    entries.reserve(entries.size() + input->size() / 4);
    for (const Series& s : *input) {
      const int metric = names.metricFor(s);
      if (metric < 0) continue;
      bool namespaced = false;
      scan.resolve(*s.labels, resources, namespaced);
      if (resources.empty()) {
        stats.droppedNoResource += s.count;
        continue;
      }
      stats.matched += s.count;
      for (int resource : resources) {
        const bool keyNamespaced = namespaced && !scan.clusterScoped(resource);
        entries[entryKey(resource, keyNamespaced, metric)] = {static_cast<uint32_t>(r), &s.name};
      }
    }
  }
  registry->entries_.reserve(entries.size());
  for (const auto& [key, ref] : entries) {
    const int resource = static_cast<int>(key >> 33);
    const bool namespaced = ((key >> 32) & 1U) != 0;
    const int metric = static_cast<int>(key & 0xffffffffU);
    registry->entries_.push_back(
        {{interner.groupResource(resource), namespaced, interner.metricName(metric)},
         *ref.seriesName,
         &list[ref.rule]});
    ++registry->stats_[ref.rule].entries;
  }
  std::sort(registry->entries_.begin(), registry->entries_.end(),
            [](const CustomEntry& a, const CustomEntry& b) {
              return std::tie(a.info.resource, a.info.namespaced, a.info.metric) <
                     std::tie(b.info.resource, b.info.namespaced, b.info.metric);
            });
  registry->rules_ = std::move(rules);
  return std::shared_ptr<const CustomRegistry>(std::move(registry));
}

const CustomEntry* CustomRegistry::find(const GroupResource& resource, bool namespaced,
                                        std::string_view metric) const {
  auto before = [&](const CustomEntry& e) {
    using Key = std::tuple<std::string_view, std::string_view, bool, std::string_view>;
    return Key(e.info.resource.group, e.info.resource.resource, e.info.namespaced, e.info.metric) <
           Key(resource.group, resource.resource, namespaced, metric);
  };
  auto it = std::partition_point(entries_.begin(), entries_.end(), before);
  if (it == entries_.end() || it->info.resource != resource || it->info.namespaced != namespaced ||
      it->info.metric != metric) {
    return nullptr;
  }
  return &*it;
}

core::Result<std::shared_ptr<const ExternalRegistry>> ExternalRegistry::build(
    std::shared_ptr<const RuleSet> rules, const SeriesByQuery& series) {
  auto registry = std::make_shared<ExternalRegistry>();
  Interner interner;
  std::unordered_map<int, EntryRef> entries;
  const std::vector<CompiledRule>& list = rules->externalRules;
  registry->stats_.resize(list.size());
  for (size_t r = 0; r < list.size(); ++r) {
    const CompiledRule& rule = list[r];
    const std::vector<Series>* input = seriesOf(series, rule);
    if (input == nullptr) return missingQuery(rule);
    RuleStats& stats = registry->stats_[r];
    RuleScan names(rule, interner, stats);
    for (const Series& s : *input) {
      const int metric = names.metricFor(s);
      if (metric < 0) continue;
      stats.matched += s.count;
      entries[metric] = {static_cast<uint32_t>(r), &s.name};
    }
  }
  for (const auto& [metric, ref] : entries) {
    registry->entries_.push_back({interner.metricName(metric), *ref.seriesName, &list[ref.rule]});
    ++registry->stats_[ref.rule].entries;
  }
  std::sort(registry->entries_.begin(), registry->entries_.end(),
            [](const ExternalEntry& a, const ExternalEntry& b) { return a.metric < b.metric; });
  registry->rules_ = std::move(rules);
  return std::shared_ptr<const ExternalRegistry>(std::move(registry));
}

const ExternalEntry* ExternalRegistry::find(std::string_view metric) const {
  auto it =
      std::lower_bound(entries_.begin(), entries_.end(), metric,
                       [](const ExternalEntry& e, std::string_view m) { return e.metric < m; });
  return it == entries_.end() || it->metric != metric ? nullptr : &*it;
}

}  // namespace gpuscale::rules
