// RFC 3339 timestamps as Kubernetes writes them: `metav1.Time` ("2026-11-22T00:30:00Z", whole
// seconds, UTC) and `metav1.MicroTime` ("2026-11-22T00:30:00.123456Z"), and a parser that accepts
// both plus numeric offsets ("+01:00"). One place for the adapter's wire format, the planner's
// snapshot and the reconciler's annotations, Events and Leases.
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscale::core {

using WallTime = std::chrono::system_clock::time_point;

// Whole seconds (the fraction is truncated), UTC, "Z" suffix.
std::string formatRfc3339(WallTime at);

// Microseconds (truncated), UTC, "Z" suffix: metav1.MicroTime.
std::string formatRfc3339Micro(WallTime at);

// "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)", 't'/'z' accepted as Go does; the fraction is kept to
// the system clock's precision. nullopt when malformed or out of range.
std::optional<WallTime> parseRfc3339(std::string_view text);

}  // namespace gpuscale::core
