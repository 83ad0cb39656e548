#include "quantity.h"

#include "gpuscale/core/duration.h"
#include "gpuscale/core/quantity.h"
#include "gpuscale/core/rfc3339.h"

#include <string>
#include <utility>

namespace gpuscale::partition {

std::optional<double> parseQuantity(std::string_view text) {
  auto quantity = core::Quantity::parse(text);
  if (!quantity) return std::nullopt;
  return quantity->toDouble();
}

std::optional<std::chrono::milliseconds> parseDuration(std::string_view text) {
  auto duration = core::parseGoDuration(text);
  if (!duration || duration->count() < 0) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(*duration);
}

}  // namespace gpuscale::partition
