// Streaming decoder of Prometheus HTTP API responses: one pass of nlohmann's SAX parser over the
// body builds the result types directly, without a JSON document in between (half the time of a DOM
// parse plus conversion, and no DOM-sized memory for large /api/v1/series answers). Field order in
// the body does not matter. Semantics are those documented in gpuscale/prom/wire.h.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/status.h"
#include "gpuscale/prom/types.h"
#include "gpuscale/prom/wire.h"

namespace gpuscale::prom {

// kSeriesLabelNames: a /api/v1/series body reduced to MetricLabelNames while it is decoded.
enum class ResponseShape { kQuery, kSeries, kSeriesLabelNames, kStringList };

struct DecodedResponse {
  QueryResult query;                 // kQuery
  std::vector<Series> series;        // kSeries
  MetricLabelNames labelNames;       // kSeriesLabelNames
  std::vector<std::string> strings;  // kStringList
};

core::Status decodeResponse(int httpStatus, std::string_view body, ResponseShape shape,
                            DecodedResponse& out);

// The same decoding over a body that arrives in pieces: memory is one piece plus what `shape`
// builds. Stops reading at the first error; reads the body to its end otherwise.
core::Status decodeResponse(int httpStatus, const BodyPieces& next, ResponseShape shape,
                            DecodedResponse& out);

}  // namespace gpuscale::prom
