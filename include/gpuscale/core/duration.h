// Durations in Go's `time.ParseDuration` syntax ("300ms", "2s", "1m30s", "1.5h", "-1h") for flags,
// and in Prometheus' `model.Duration` syntax ("5m", "1d", "2w", "1y", "1h30m"; no fractions, no
// sign) for rule files. Formatting in Go's `Duration.String()` form ("1m30s", "500ms", "0s") for
// logs and messages.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "gpuscale/core/result.h"

namespace gpuscale::core {

using Duration = std::chrono::nanoseconds;

// Go syntax. A bare "0" is allowed; any other number needs a unit (ns, us, µs, ms, s, m, h).
// Overflow and malformed text are Status::badRequest errors quoting the text.
Result<Duration> parseGoDuration(std::string_view text);

// Prometheus syntax (units ms, s, m, h, d, w, y; y = 365d; units in decreasing order).
Result<Duration> parsePrometheusDuration(std::string_view text);

// Go's Duration.String().
std::string formatGoDuration(Duration d);

}  // namespace gpuscale::core
