// Series discovery through Prometheus' label APIs instead of `/api/v1/series`: answers are a few KB
// however many series match, and Prometheus does not load every series' labels into a response (at
// a million series the series relist costs seconds, ~90 MB and ~700 MB of Prometheus memory:
// docs/benchmarks.md). The rule registry only needs each metric's name and label NAMES to associate
// resources: which of a few labels (resource overrides) each metric carries, or every label name
// (`<<.Resource>>` templates), always over the series that match the rule's `seriesQuery`.
//
// Cost model (Prometheus 2.42, measured in docs/benchmarks.md "Discovery"): a `__name__` values
// call whose matchers are only on the metric name is nearly free; a matcher such as `L!=""` costs
// in proportion to (values of L) x (candidate metric names), so a query with `pod!=""` is the
// expensive part of a relist. Discovery therefore
//  1. asks for the candidate names and label names with the metric-name matchers of the query only
//     (cheap, a superset of the answer);
//  2. asks for the names matching the full query, and for each label L it still has to decide, the
//     names matching the query plus `L!=""` ("probes"): exact per metric, because every such call
//     keeps all of the query's matchers;
//  3. splits each expensive call of step 2 over disjoint sets of candidate names
//     (`__name__=~"a|b|..."`) so that Prometheus works on them in parallel.
// A `<<.Resource>>` rule whose candidate label names are too many to probe one by one falls back to
// the union of label names of the query and then to one label-names call per metric.
//
// `/api/v1/series` remains for what needs label VALUES (standalone object listing) and as the
// fallback when a server rejects the label calls (kHttpStatus, kPrometheusError other than
// transient ones).
//
// Equivalence with a series-by-series view: label names are the union over the metric's matching
// series (a metric whose series differ in their label sets shows the union) and `__name__` is
// dropped, as with the series view. One difference remains in time: the label APIs of Prometheus
// select by block (2 h) and head, the series API by chunk, so a series whose last sample is older
// than the window but still in a block or head that overlaps it is seen by the label calls only.
//
// Thread safety: functions; they block, so call them from a thread that may wait (the relister),
// never from a Client callback.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/flag_set.h"
#include "gpuscale/prom/client.h"

namespace gpuscale::prom {

// How discoverLabelNames finds every label name of every metric.
enum class LabelNamesStrategy {
  kAuto,       // kProbes, or kUnion when the candidate labels exceed maxLabelProbes
  kProbes,     // candidates by the name matchers, then one probe per candidate label
  kUnion,      // names and the union of label names of the full query, then the cheaper of
               // probes over that union or one label-names call per metric
  kPerMetric,  // names of the full query, then one label-names call per metric
};

struct DiscoveryOptions {
  // Calls in flight at once.
  size_t concurrency = 4;
  // Use /api/v1/series when the label calls fail with a non-transient error.
  bool fallbackToSeries = true;
  LabelNamesStrategy strategy = LabelNamesStrategy::kAuto;
  // An expensive `__name__` values call is split into at most this many calls over disjoint sets
  // of candidate names (1: never split) ...
  size_t nameShards = 2;
  // ... each with at least this many names ...
  size_t minNamesPerShard = 100;
  // ... and a name alternation of at most this many bytes (more shards when needed), so that every
  // request stays well inside URL limits of proxies in front of Prometheus.
  size_t maxShardBytes = 16 * 1024;
  // kAuto: probe at most this many candidate labels one by one.
  size_t maxLabelProbes = 16;
  // Label names dropped from every view: the replica labels of a deduplicating backend. Thanos
  // Query removes its replica labels (--query.replica-label) from series and query results, but
  // its label APIs still list them, so without this the label calls would show a label that no
  // series the adapter queries carries. Never probed either.
  std::vector<std::string> replicaLabels;
};

// The servers whose label-API costs discovery knows (measured at 1M series, side by side, in
// docs/benchmarks.md "Discovery"). Every strategy gives the same, exact view; this only picks the
// cheapest calls.
enum class DiscoveryBackend {
  // Prometheus 2.x and 3.x: a `L!=""` matcher costs in proportion to the values of L, so probes
  // split over name shards (the defaults of DiscoveryOptions).
  kPrometheus,
  // VictoriaMetrics: label names of the full query come cheap from its index and each probe or
  // shard is a separate index scan, so the union strategy in single calls.
  kVictoriaMetrics,
  // Thanos Query in front of Prometheus sidecars: every label call is passed through to the
  // Prometheus label APIs, so their costs rank as on Prometheus, plus a fixed cost per call.
  kThanos,
};

// "prometheus", "victoriametrics" or "thanos"; anything else is a badRequest Status naming them.
Result<DiscoveryBackend> parseDiscoveryBackend(std::string_view name);

// The cheapest DiscoveryOptions on `backend`, from the defaults (pure).
DiscoveryOptions discoveryOptionsFor(DiscoveryBackend backend);

// Appends the comma-separated label names of `value` (a --thanos-replica-label flag, spelled as
// Thanos' own --query.replica-label) to `labels`; an empty name is a badRequest Status.
core::Status appendReplicaLabels(std::string_view value, std::vector<std::string>& labels);

// Declares --discovery-backend (sets `*backend` and `*options` to discoveryOptionsFor() it, keeping
// the replica labels) and --thanos-replica-label (repeatable, comma-separated, appended to
// options->replicaLabels), as serve and explain take them.
void addDiscoveryFlags(core::FlagSet& flags, DiscoveryBackend* backend, DiscoveryOptions* options);

// How a discovery was done (for logs, /metrics and benchmarks).
struct DiscoveryReport {
  bool usedSeriesFallback = false;
  size_t calls = 0;
  std::string strategy;  // "presence", "probes", "union", "per-metric", "series"
};

// Which of `labels` each metric of `seriesQuery` carries, for rules whose resources come from fixed
// label overrides. Every metric of `seriesQuery` is in the result, with the subset of `labels` that
// at least one of its matching series carries. Calls: one cheap `__name__` call by the name
// matchers, one for the query (none when the query has only name matchers) and one probe per label
// the query does not already require, each split into shards as DiscoveryOptions says.
Result<MetricLabelNames> discoverLabelPresence(Client& client, std::string_view seriesQuery,
                                               const std::vector<std::string>& labels,
                                               const TimeRange& window,
                                               const DiscoveryOptions& options = {},
                                               DiscoveryReport* report = nullptr);

// Every label name of every metric of `seriesQuery` (for `<<.Resource>>` template rules), by
// `options.strategy`.
Result<MetricLabelNames> discoverLabelNames(Client& client, std::string_view seriesQuery,
                                            const TimeRange& window,
                                            const DiscoveryOptions& options = {},
                                            DiscoveryReport* report = nullptr);

// What a set of rules needs of one seriesQuery: `labels` given -> discoverLabelPresence over them
// (an empty list: only the metric names); absent -> discoverLabelNames.
Result<MetricLabelNames> discoverMetrics(Client& client, std::string_view seriesQuery,
                                         const std::optional<std::vector<std::string>>& labels,
                                         const TimeRange& window,
                                         const DiscoveryOptions& options = {},
                                         DiscoveryReport* report = nullptr);

// The same view from `/api/v1/series` (one call, cost proportional to the series count), through
// Client::seriesLabelNamesAsync: HttpClient builds the view while decoding, holding no Series.
Result<MetricLabelNames> discoverLabelNamesFromSeries(Client& client, std::string_view seriesQuery,
                                                      const TimeRange& window);

// The view of a list of series (pure).
MetricLabelNames labelNamesOf(const std::vector<Series>& series);

// Builds the view one series at a time, keeping only each metric's distinct label names (memory
// proportional to metrics x label names, not to series). Not thread-safe.
class MetricLabelNamesBuilder {
 public:
  // Adds the label names of `series` (ignored when it has no `__name__`).
  void add(const Series& series);
  MetricLabelNames take() { return std::move(view_); }

 private:
  MetricLabelNames view_;
};

// True when `seriesQuery`'s own matchers require `label` to be non-empty (`label!=""`, `label="v"`
// with v non-empty). Conservative: regex matchers never count.
bool requiresLabel(std::string_view seriesQuery, std::string_view label);

// `seriesQuery` with one more label matcher (`pod!=""`) inside its braces (added when it has none).
Result<std::string> addMatcher(std::string_view seriesQuery, std::string_view matcher);

// `seriesQuery` narrowed to the metric `name`: `{a="b"}` -> `{__name__="name",a="b"}`; a query that
// already names the metric (`name{...}`, `name`) is returned unchanged. A query naming another
// metric, or not a series selector, is a Status::badRequest.
Result<std::string> restrictToMetric(std::string_view seriesQuery, std::string_view name);

// `seriesQuery` narrowed to the metrics `names` (not empty): restrictToMetric for one name, else
// `__name__=~"a|b"` (each name regex-quoted) added to its matchers.
Result<std::string> restrictToMetrics(std::string_view seriesQuery,
                                      const std::vector<std::string>& names);

// The metric-name part of a series selector.
struct NameSelector {
  // The selector with only its metric name and `__name__` matchers (`m`, `{__name__=~"x"}`), or
  // empty when it has none (every metric name is a candidate).
  std::string selector;
  // True when the query has no other matchers (the name part selects exactly the same series).
  bool complete = true;
};
Result<NameSelector> nameSelectorOf(std::string_view seriesQuery);

}  // namespace gpuscale::prom
