// Small parsers for the few Kubernetes quantities and Go durations the partition module reads (private).
// A local stand-in until the core Quantity type is available to this module.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace gpuscale::partition {

// A Kubernetes quantity ("7", "399300m", "1.5", "40Gi", "2k") in base units; nullopt when malformed.
std::optional<double> parseQuantity(std::string_view text);

// A Go duration made of integer parts ("90s", "10m", "1h30m", "500ms"); nullopt when malformed.
std::optional<std::chrono::milliseconds> parseDuration(std::string_view text);

}  // namespace gpuscale::partition

namespace gpuscale::partition {

// An RFC 3339 timestamp as Kubernetes writes it ("2026-11-22T00:30:00Z", optional fraction, Z or +hh:mm);
// nullopt when malformed.
std::optional<std::chrono::system_clock::time_point> parseTimestamp(std::string_view text);

}  // namespace gpuscale::partition
