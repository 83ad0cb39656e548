// The wire format of the Prometheus HTTP API: how request parameters are encoded (as Go's
// url.Values.Encode: keys sorted, query-escaped, for both query strings and POST form bodies) and
// how responses are decoded (the `{status, data, errorType, error, warnings}` envelope, per HTTP
// status as prometheus-adapter's client: 2xx, 400, 422 and 503 carry the envelope; any other status
// is a kHttpStatus failure).
//
// Pure functions, separate from the HTTP transport so they can be tested and benchmarked alone.
//
// Thread safety: pure functions.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscale/core/duration.h"
#include "gpuscale/core/result.h"
#include "gpuscale/prom/types.h"

namespace gpuscale::prom {

using core::Result;
using Params = std::vector<std::pair<std::string, std::string>>;

// Unix seconds with up to three decimals and no trailing zeros ("1545384635.773", "1545384635.7",
// "12").
std::string formatTime(Timestamp t);
// A Prometheus duration for the `timeout` parameter ("2s", "1500ms"), millisecond precision, at
// least 1ms.
std::string formatTimeout(core::Duration d);

// Go's url.QueryEscape: unreserved characters kept, space as '+', everything else %XX.
std::string queryEscape(std::string_view text);
// Go's url.PathEscape for one path segment (space as %20).
std::string pathEscape(std::string_view text);
// `key=value&...`, keys sorted (stable for repeated keys such as match[]).
std::string encodeParams(Params params);
// Joins a base path ("", "/", "/prometheus/") and an API path ("/api/v1/query") with exactly one
// slash.
std::string joinPath(std::string_view base, std::string_view path);

// Parameters of each API call (window bounds only when present).
Params queryParams(std::string_view promql, Timestamp at, core::Duration timeout);
Params matchParams(const Matchers& match, const TimeRange& window);

// Decoders. `httpStatus` is the HTTP status of the response, `body` its complete body.
Result<QueryResultPtr> decodeQueryResponse(int httpStatus, std::string_view body);
Result<std::vector<Series>> decodeSeriesResponse(int httpStatus, std::string_view body);
// The same body reduced to each metric's label names while decoding (one label set at a time).
Result<MetricLabelNames> decodeSeriesLabelNamesResponse(int httpStatus, std::string_view body);

// A body read piece by piece: each call returns the next piece (valid until the next call), an
// empty one at the end of the body or when reading failed (the caller knows which).
using BodyPieces = std::function<std::string_view()>;
// decodeSeriesLabelNamesResponse over a body that arrives in pieces: memory is one piece plus the
// view, however long the body. Stops reading at the first error, else reads to the end of the body.
Result<MetricLabelNames> decodeSeriesLabelNamesResponse(int httpStatus, const BodyPieces& next);
// For /api/v1/labels and /api/v1/label/<name>/values.
Result<std::vector<std::string>> decodeStringListResponse(int httpStatus, std::string_view body);

}  // namespace gpuscale::prom
