// Value types of the Prometheus HTTP API as gpuscale uses them: instant-query results (vector,
// scalar, matrix, string), series label sets, label names and values, and the time parameters of
// those calls.
//
// Values are plain, immutable once built; a query result is shared (QueryResultPtr) so a cached
// result can be handed to many callers without copying its samples.
//
// Thread safety: value types; a `const QueryResult` may be read from any number of threads.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/label_selector.h"

namespace gpuscale::prom {

// Prometheus times have millisecond precision; finer parts are truncated on the wire.
using Timestamp = std::chrono::system_clock::time_point;
using Labels = core::Labels;

// Series selectors, each sent as one `match[]` parameter (Prometheus ORs them).
using Matchers = std::vector<std::string>;

// The `start`/`end` parameters of series and label calls. An absent bound is not sent (Prometheus
// then uses the beginning of time / now).
struct TimeRange {
  std::optional<Timestamp> start;
  std::optional<Timestamp> end;
};

// One point of a time series. The value may be NaN or ±Inf, exactly as Prometheus reported it.
struct Point {
  Timestamp timestamp;
  double value = 0;
};

// One element of an instant vector.
struct Sample {
  Labels metric;
  Point point;
};

// One series of a range vector (matrix).
struct RangeSeries {
  Labels metric;
  std::vector<Point> points;
};

enum class ResultType { kVector, kScalar, kMatrix, kString };

// "vector", "scalar", "matrix", "string".
std::string_view resultTypeName(ResultType type);

// The `data` of a successful /api/v1/query call. Only the member that matches `type` is filled.
struct QueryResult {
  ResultType type = ResultType::kVector;
  std::vector<Sample> vector;
  Point scalar;
  std::vector<RangeSeries> matrix;
  Timestamp stringTime;
  std::string string;
  // Prometheus' `warnings`, if any (for logs; they do not make the result an error).
  std::vector<std::string> warnings;
};

using QueryResultPtr = std::shared_ptr<const QueryResult>;

// A series as /api/v1/series returns it: its full label set including `__name__`.
using Series = Labels;

// Metric name -> the union of its series' label names (sorted, without `__name__`): what discovery
// needs of a set of series.
using MetricLabelNames = std::map<std::string, std::vector<std::string>, std::less<>>;

}  // namespace gpuscale::prom
