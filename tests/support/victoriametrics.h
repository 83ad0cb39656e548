// VictoriaMetrics single-node as the backend of PrometheusServer (the backend matrix's
// non-Prometheus store): the command line and loading history. VictoriaMetrics has no offline block
// writer like `promtool tsdb create-blocks-from`, so history goes in through its import API
// (`/api/v1/import/prometheus`, millisecond timestamps) on a running server, followed by
// `/internal/force_flush` to make it searchable at once.
//
// How it answers differently from Prometheus (pinned by the `_victoriametrics` test variants):
// its label and series APIs select by whole UTC day of its per-day index, not by block or chunk;
// `limit` truncates without a warning; `/api/v1/series` refuses more than -search.maxSeries
// (30,000) matching series; `/api/v1/status/buildinfo` always reports Prometheus "2.24.0"; PromQL
// errors carry errorType "422" instead of "bad_data"; and by default a sample is visible to queries
// only 30 s after it was scraped (-search.latencyOffset), which the tests set to 0 s.
//
// Thread safety: functions without shared state.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "gpuscale/core/result.h"
#include "support/backend.h"

namespace gpuscale::test {

std::string victoriaMetricsBinary();

// The victoria-metrics command line for a test server on 127.0.0.1:`port`: data in `storageDir`,
// scraping as `scrapeConfigFile` (Prometheus' scrape_configs format) says, 30-day retention, fresh
// samples visible at once and no response cache (history may be imported after the first query).
std::vector<std::string> victoriaMetricsArgs(const std::string& scrapeConfigFile,
                                             const std::string& storageDir, uint16_t port);

// Rewrites OpenMetrics text (timestamps in seconds, optional) into the Prometheus text format with
// millisecond timestamps that `/api/v1/import/prometheus` reads; comments (`# TYPE`, `# EOF`) are
// dropped. A sample line without a value is a bad-request Status naming the line. Pure.
core::Status openMetricsToImportText(std::istream& in, std::ostream& out);

// Imports `openMetricsFile` into the VictoriaMetrics at `url` and flushes it so that it is
// searchable; `workDir` holds the converted file and curl's log while it runs.
core::Status importOpenMetrics(const std::string& url, const std::string& openMetricsFile,
                               const std::string& workDir);

}  // namespace gpuscale::test
