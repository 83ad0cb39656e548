#include "gpuscale/prom/discovery.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "gpuscale/core/go_quote.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::prom {
namespace {

using Names = std::vector<std::string>;

bool isTransient(const Status& status) { return status.httpCode() == 503; }

// One label-API call: the values of `label` (`__name__` for metric names), or the label names when
// `label` is empty, over the series matching any of `match` (none: every series).
struct LabelCall {
  std::string label;
  Matchers match;
};

// Runs `calls` with at most `concurrency` in flight and returns their answers in order. After the
// first failure no further call is issued; the ones not issued answer with that failure.
std::vector<Result<Names>> runCalls(Client& client, const std::vector<LabelCall>& calls,
                                    const TimeRange& window, size_t concurrency, size_t& counter) {
  std::vector<Result<Names>> answers(calls.size(), Status::unavailable("not asked"));
  std::mutex mutex;
  std::condition_variable idle;
  size_t inFlight = 0;
  Status firstError;
  for (size_t i = 0; i < calls.size(); ++i) {
    {
      std::unique_lock lock(mutex);
      idle.wait(lock, [&] { return inFlight < std::max<size_t>(1, concurrency); });
      if (!firstError.ok()) {
        answers[i] = firstError;
        continue;
      }
      ++inFlight;
      ++counter;
    }
    auto done = [&, i](Result<Names> answer) {
      std::lock_guard lock(mutex);
      if (!answer && firstError.ok()) firstError = answer.status();
      answers[i] = std::move(answer);
      --inFlight;
      idle.notify_all();
    };
    if (calls[i].label.empty()) {
      client.labelNamesAsync(calls[i].match, window, done);
    } else {
      client.labelValuesAsync(calls[i].label, calls[i].match, window, done);
    }
  }
  std::unique_lock lock(mutex);
  idle.wait(lock, [&] { return inFlight == 0; });
  return answers;
}

Matchers matchersOf(const std::string& selector) {
  return selector.empty() ? Matchers{} : Matchers{selector};
}

// `selector` split over disjoint groups of `candidates` (sorted) as `options` allows; `selector`
// alone when splitting is not worth it.
Result<std::vector<std::string>> shards(const std::string& selector, const Names& candidates,
                                        const DiscoveryOptions& options) {
  const size_t minPerShard = std::max<size_t>(1, options.minNamesPerShard);
  if (options.nameShards <= 1 || candidates.size() < 2 * minPerShard) return {{selector}};
  size_t bytes = 0;
  for (const auto& name : candidates) bytes += core::regexQuoteMeta(name).size() + 1;
  size_t count = std::min(options.nameShards, candidates.size() / minPerShard);
  count = std::max(
      count, (bytes + options.maxShardBytes - 1) / std::max<size_t>(1, options.maxShardBytes));
  count = std::min(count, candidates.size());
  std::vector<std::string> out;
  for (size_t s = 0; s < count; ++s) {
    Names group(candidates.begin() + static_cast<ptrdiff_t>(s * candidates.size() / count),
                candidates.begin() + static_cast<ptrdiff_t>((s + 1) * candidates.size() / count));
    auto restricted = restrictToMetrics(selector, group);
    if (!restricted) return restricted.status();
    out.push_back(std::move(*restricted));
  }
  return out;
}

void sortUnique(Names& names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
}

// The metric names matching `query` (`known` when the caller has them already) and, for each label
// of `probes`, the names matching `query` plus `label!=""`, every call split into shards over
// `candidates`.
struct ProbeAnswers {
  Names base;
  std::vector<Names> probed;
};

Result<ProbeAnswers> probe(Client& client, std::string_view query, const Names* known,
                           const Names& candidates, const Names& probes, const TimeRange& window,
                           const DiscoveryOptions& options, size_t& counter) {
  std::vector<LabelCall> calls;
  std::vector<size_t> owner;  // 0: the base query, i + 1: probes[i]
  auto add = [&](const std::string& selector, size_t who) -> Status {
    auto split = shards(selector, candidates, options);
    if (!split) return split.status();
    for (auto& shard : *split) {
      calls.push_back({"__name__", {std::move(shard)}});
      owner.push_back(who);
    }
    return Status();
  };
  if (!known) {
    if (Status s = add(std::string(query), 0); !s.ok()) return s;
  }
  for (size_t i = 0; i < probes.size(); ++i) {
    auto selector = addMatcher(query, probes[i] + "!=\"\"");
    if (!selector) return selector.status();
    if (Status s = add(*selector, i + 1); !s.ok()) return s;
  }
  auto answers = runCalls(client, calls, window, options.concurrency, counter);
  ProbeAnswers out;
  out.probed.resize(probes.size());
  if (known) out.base = *known;
  for (size_t c = 0; c < calls.size(); ++c) {
    if (!answers[c]) return answers[c].status();
    Names& target = owner[c] == 0 ? out.base : out.probed[owner[c] - 1];
    target.insert(target.end(), answers[c]->begin(), answers[c]->end());
  }
  sortUnique(out.base);
  for (auto& names : out.probed) sortUnique(names);
  return out;
}

// Every name of `answers.base` with `implied` plus each probed label it answered to.
MetricLabelNames assemble(const ProbeAnswers& answers, const Names& implied, const Names& probes) {
  MetricLabelNames out;
  for (const auto& name : answers.base) out[name] = implied;
  for (size_t i = 0; i < probes.size(); ++i) {
    for (const auto& name : answers.probed[i]) {
      if (auto it = out.find(name); it != out.end()) it->second.push_back(probes[i]);
    }
  }
  for (auto& [name, present] : out) sortUnique(present);
  return out;
}

// `labels` split into those `query` requires (every matching series has them) and those to probe;
// `__name__` and the replica labels (left out of every view) are neither.
void splitRequired(std::string_view query, const Names& labels, const DiscoveryOptions& options,
                   Names& implied, Names& probes) {
  for (const auto& label : labels) {
    if (label == "__name__" || std::find(options.replicaLabels.begin(), options.replicaLabels.end(),
                                         label) != options.replicaLabels.end()) {
      continue;
    }
    (requiresLabel(query, label) ? implied : probes).push_back(label);
  }
}

Result<MetricLabelNames> presence(Client& client, std::string_view query, const Names& labels,
                                  const TimeRange& window, const DiscoveryOptions& options,
                                  size_t& counter) {
  auto names = nameSelectorOf(query);
  if (!names) return names.status();
  auto candidates = runCalls(client, {{"__name__", matchersOf(names->selector)}}, window,
                             options.concurrency, counter)[0];
  if (!candidates) return candidates.status();
  Names implied, probes;
  splitRequired(query, labels, options, implied, probes);
  if (candidates->empty()) return MetricLabelNames{};
  auto answers = probe(client, query, names->complete ? &*candidates : nullptr, *candidates, probes,
                       window, options, counter);
  if (!answers) return answers.status();
  return assemble(*answers, implied, probes);
}

// Label names for each of `names`, one label-names call per metric.
Result<MetricLabelNames> labelNamesPerMetric(Client& client, std::string_view query,
                                             const Names& names, const TimeRange& window,
                                             const DiscoveryOptions& options, size_t& counter) {
  std::vector<LabelCall> calls;
  for (const auto& name : names) {
    auto selector = restrictToMetric(query, name);
    if (!selector) return selector.status();
    calls.push_back({"", {std::move(*selector)}});
  }
  auto answers = runCalls(client, calls, window, options.concurrency, counter);
  MetricLabelNames out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!answers[i]) return answers[i].status();
    auto& target = out[names[i]];
    for (auto& label : *answers[i]) {
      if (label != "__name__") target.push_back(std::move(label));
    }
    sortUnique(target);
  }
  return out;
}

// Names and the union of label names of the full query, then the cheaper of probes over that union
// or one label-names call per metric (kUnion), or the per-metric calls directly (kPerMetric).
Result<MetricLabelNames> labelNamesOfQuery(Client& client, std::string_view query,
                                           const TimeRange& window, const DiscoveryOptions& options,
                                           bool perMetric, size_t& counter) {
  Matchers match{std::string(query)};
  std::vector<LabelCall> calls{{"__name__", match}};
  if (!perMetric) calls.push_back({"", match});
  auto answers = runCalls(client, calls, window, options.concurrency, counter);
  for (const auto& answer : answers) {
    if (!answer) return answer.status();
  }
  const Names& names = *answers[0];
  if (perMetric) return labelNamesPerMetric(client, query, names, window, options, counter);
  Names implied, probes;
  splitRequired(query, *answers[1], options, implied, probes);
  if (probes.size() >= names.size()) {
    return labelNamesPerMetric(client, query, names, window, options, counter);
  }
  auto probed = probe(client, query, &names, names, probes, window, options, counter);
  if (!probed) return probed.status();
  return assemble(*probed, implied, probes);
}

Result<MetricLabelNames> labelNamesByProbes(Client& client, std::string_view query,
                                            const TimeRange& window,
                                            const DiscoveryOptions& options,
                                            DiscoveryReport& report) {
  auto names = nameSelectorOf(query);
  if (!names) return names.status();
  Matchers match = matchersOf(names->selector);
  auto answers = runCalls(client, {{"__name__", match}, {"", match}}, window, options.concurrency,
                          report.calls);
  for (const auto& answer : answers) {
    if (!answer) return answer.status();
  }
  const Names& candidates = *answers[0];
  Names implied, probes;
  splitRequired(query, *answers[1], options, implied, probes);
  if (options.strategy == LabelNamesStrategy::kAuto && probes.size() > options.maxLabelProbes) {
    report.strategy = "union";
    return labelNamesOfQuery(client, query, window, options, false, report.calls);
  }
  if (candidates.empty()) return MetricLabelNames{};
  auto probed = probe(client, query, names->complete ? &candidates : nullptr, candidates, probes,
                      window, options, report.calls);
  if (!probed) return probed.status();
  return assemble(*probed, implied, probes);
}

// Runs `discover` on a cleared report (`*reportOrNull`, or one of its own when it is null), then
// the series relist instead when it failed in a way the series API may not.
template <typename Discover>
Result<MetricLabelNames> withSeriesFallback(Client& client, std::string_view query,
                                            const TimeRange& window,
                                            const DiscoveryOptions& options,
                                            DiscoveryReport* reportOrNull, Discover discover) {
  DiscoveryReport local;
  DiscoveryReport& report = reportOrNull ? *reportOrNull : local;
  report = {};
  auto found = discover(report);
  if (found) {
    for (auto& [metric, labels] : *found) {
      std::erase_if(labels, [&](const std::string& label) {
        return std::find(options.replicaLabels.begin(), options.replicaLabels.end(), label) !=
               options.replicaLabels.end();
      });
    }
  }
  if (found || !options.fallbackToSeries || isTransient(found.status()) ||
      !failureKindOf(found.status()).has_value()) {
    return found;
  }
  report.usedSeriesFallback = true;
  report.strategy = "series";
  ++report.calls;
  return discoverLabelNamesFromSeries(client, query, window);
}

}  // namespace

void MetricLabelNamesBuilder::add(const Series& series) {
  auto name = series.find("__name__");
  if (name == series.end()) return;
  auto it = view_.find(name->second);
  if (it == view_.end()) it = view_.emplace(name->second, Names{}).first;
  Names& target = it->second;
  for (const auto& [label, value] : series) {
    if (label == "__name__") continue;
    auto at = std::lower_bound(target.begin(), target.end(), label);
    if (at == target.end() || *at != label) target.insert(at, label);
  }
}

MetricLabelNames labelNamesOf(const std::vector<Series>& series) {
  MetricLabelNamesBuilder builder;
  for (const auto& labels : series) builder.add(labels);
  return builder.take();
}

Result<MetricLabelNames> discoverLabelNamesFromSeries(Client& client, std::string_view seriesQuery,
                                                      const TimeRange& window) {
  return client.seriesLabelNames({std::string(seriesQuery)}, window);
}

Result<MetricLabelNames> discoverLabelPresence(Client& client, std::string_view seriesQuery,
                                               const std::vector<std::string>& labels,
                                               const TimeRange& window,
                                               const DiscoveryOptions& options,
                                               DiscoveryReport* report) {
  return withSeriesFallback(client, seriesQuery, window, options, report, [&](DiscoveryReport& r) {
    r.strategy = "presence";
    return presence(client, seriesQuery, labels, window, options, r.calls);
  });
}

Result<MetricLabelNames> discoverLabelNames(Client& client, std::string_view seriesQuery,
                                            const TimeRange& window,
                                            const DiscoveryOptions& options,
                                            DiscoveryReport* report) {
  return withSeriesFallback(client, seriesQuery, window, options, report, [&](DiscoveryReport& r) {
    switch (options.strategy) {
      case LabelNamesStrategy::kUnion:
      case LabelNamesStrategy::kPerMetric:
        r.strategy = options.strategy == LabelNamesStrategy::kUnion ? "union" : "per-metric";
        return labelNamesOfQuery(client, seriesQuery, window, options,
                                 options.strategy == LabelNamesStrategy::kPerMetric, r.calls);
      case LabelNamesStrategy::kAuto:
      case LabelNamesStrategy::kProbes:
        break;
    }
    r.strategy = "probes";
    return labelNamesByProbes(client, seriesQuery, window, options, r);
  });
}

Result<MetricLabelNames> discoverMetrics(Client& client, std::string_view seriesQuery,
                                         const std::optional<std::vector<std::string>>& labels,
                                         const TimeRange& window, const DiscoveryOptions& options,
                                         DiscoveryReport* report) {
  if (labels) return discoverLabelPresence(client, seriesQuery, *labels, window, options, report);
  return discoverLabelNames(client, seriesQuery, window, options, report);
}

}  // namespace gpuscale::prom
