// Series discovery through Prometheus' label APIs instead of `/api/v1/series`: answers are a few KB
// however many series match, and Prometheus does not load every series' labels into a response (at
// a million series the series relist costs tens of seconds, ~90 MB and ~700 MB of Prometheus
// memory: docs/benchmarks.md). The rule registry only needs each metric's name and label NAMES to
// associate resources:
//  - discoverLabelPresence: which of a few given labels (resource overrides) each metric carries;
//  - discoverLabelNames: every label name of every metric (`<<.Resource>>` templates).
// Both start from `/api/v1/label/__name__/values?match[]=<seriesQuery>`.
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

// Every label name of every metric (for `<<.Resource>>` template rules). After the `__name__` call
// and one
// `/api/v1/labels?match[]=<seriesQuery>` call (the union of label names), it takes the cheaper of:
// label presence over that union (one call per label the query does not already require) or one
// label-names call per metric (`concurrency` in flight).
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
