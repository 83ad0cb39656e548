// The few Kubernetes quantities, Go durations and timestamps the partition module reads, in the
// shapes its callers want (private). Quantities and durations delegate to gpuscale::core.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace gpuscale::partition {

// A Kubernetes quantity ("7", "399300m", "1.5", "40Gi", "2k") in base units; nullopt when
// malformed.
std::optional<double> parseQuantity(std::string_view text);

// A Go duration made of integer parts ("90s", "10m", "1h30m", "500ms"); nullopt when malformed.
std::optional<std::chrono::milliseconds> parseDuration(std::string_view text);

}  // namespace gpuscale::partition

namespace gpuscale::partition {

// An RFC 3339 timestamp as Kubernetes writes it ("2026-11-22T00:30:00Z", optional fraction, Z or
// +hh:mm); nullopt when malformed.
std::optional<std::chrono::system_clock::time_point> parseTimestamp(std::string_view text);

}  // namespace gpuscale::partition
