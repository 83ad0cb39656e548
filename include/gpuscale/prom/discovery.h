// Series discovery whose cost does not grow with the number of series: for a rule's `seriesQuery`,
// the metric names come from `/api/v1/label/__name__/values?match[]=<seriesQuery>` and each
// metric's label names from
// `/api/v1/labels?match[]=<seriesQuery restricted to that metric>`, several calls in flight at
// once. The rule registry only needs each series' name and label NAMES to associate resources, so
// this replaces prometheus-adapter's `/api/v1/series` relist (which returns every series and, at a
// million series, costs seconds, ~100 MB and a Prometheus memory surge: see DESIGN.md and
// docs/benchmarks.md).
//
// `/api/v1/series` remains for what needs label VALUES (standalone object listing) and as the
// fallback when a server rejects the label calls (kHttpStatus, kPrometheusError other than
// transient ones).
//
// One difference to a series-by-series view: label names are the union over the metric's matching
// series. A metric whose series differ in their label sets (some with `namespace`, some without)
// therefore shows the union; both views drop `__name__`.
//
// Thread safety: functions; they block, so call them from a thread that may wait (the relister),
// never from a Client callback.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/prom/client.h"

namespace gpuscale::prom {

// Metric name -> its label names (sorted, without `__name__`).
using MetricLabelNames = std::map<std::string, std::vector<std::string>, std::less<>>;

struct DiscoveryOptions {
  // Label-name calls in flight at once.
  size_t concurrency = 4;
  // Use /api/v1/series when the label calls fail with a non-transient error.
  bool fallbackToSeries = true;
};

// How a discovery was done (for logs and /metrics).
struct DiscoveryReport {
  bool usedSeriesFallback = false;
  size_t calls = 0;
};

// Which of `labels` each metric has, for rules whose resources come from fixed label overrides: one
// `__name__` values call for `seriesQuery` plus one per label L with `L!=""` added, all in flight
// at once (1 + labels.size() calls, however many metrics and series). Every metric of `seriesQuery`
// is in the result, with the subset of `labels` that at least one of its series carries.
Result<MetricLabelNames> discoverLabelPresence(Client& client, std::string_view seriesQuery,
                                               const std::vector<std::string>& labels,
                                               const TimeRange& window,
                                               DiscoveryReport* report = nullptr);

// Every label name of every metric (for `<<.Resource>>` template rules), as described above.
Result<MetricLabelNames> discoverLabelNames(Client& client, std::string_view seriesQuery,
                                            const TimeRange& window,
                                            const DiscoveryOptions& options = {},
                                            DiscoveryReport* report = nullptr);

// The same view from `/api/v1/series` (one call, cost proportional to the series count).
Result<MetricLabelNames> discoverLabelNamesFromSeries(Client& client, std::string_view seriesQuery,
                                                      const TimeRange& window);

// The view of a list of series (pure).
MetricLabelNames labelNamesOf(const std::vector<Series>& series);

// True when `seriesQuery`'s own matchers require `label` to be non-empty (`label!=""`, `label="v"`
// with v non-empty). Conservative: regex matchers never count.
bool requiresLabel(std::string_view seriesQuery, std::string_view label);

// `seriesQuery` with one more label matcher (`pod!=""`) inside its braces (added when it has none).
Result<std::string> addMatcher(std::string_view seriesQuery, std::string_view matcher);

// `seriesQuery` narrowed to the metric `name`: `{a="b"}` -> `{__name__="name",a="b"}`; a query that
// already names the metric (`name{...}`, `name`) is returned unchanged. A query naming another
// metric, or not a series selector, is a Status::badRequest.
Result<std::string> restrictToMetric(std::string_view seriesQuery, std::string_view name);

}  // namespace gpuscale::prom
