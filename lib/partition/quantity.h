// The few Kubernetes quantities and Go durations the partition module reads, in the
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
