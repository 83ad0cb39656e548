// Fuzzes Quantity: no input may crash parse(), and every quantity that parses must print a
// canonical string that parses back to an equal value and, from then on, to the same string. (As
// in apimachinery, the first print may not be a fixed point: "437.5Ki" prints "448000", which no
// binary suffix divides, and "448000" reads back as decimal and prints "448k".) The first 8 bytes,
// read as a double, also go through fromMetricValue(), whose output must parse back to the same
// value.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_harness.h"
#include "gpuscale/core/quantity.h"

namespace {

using gpuscale::core::Quantity;

[[noreturn]] void fail(const char* what, std::string_view input) {
  gpuscale::fuzz::fail("fuzz_quantity", what, input);
}

void checkRoundTrip(const Quantity& q, std::string_view input) {
  const std::string canonical = q.toString();
  const auto reparsed = Quantity::parse(canonical);
  if (!reparsed.ok()) fail("canonical form does not parse", input);
  if (reparsed->compare(q) != 0) fail("canonical form has another value", input);
  const std::string settled = reparsed->toString();
  const auto again = Quantity::parse(settled);
  if (!again.ok() || again->toString() != settled) fail("canonical form does not settle", input);
  if (reparsed->value() != q.value() || reparsed->milliValue() != q.milliValue()) {
    fail("canonical form rounds differently", input);
  }
  const double d = q.toDouble();
  if (std::isnan(d)) fail("toDouble is NaN", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parsed = Quantity::parse(input);
  if (parsed.ok()) {
    checkRoundTrip(*parsed, input);
  } else if (parsed.status().httpCode() != 400) {
    fail("error that is not a 400", input);
  }

  if (size >= sizeof(double)) {
    double value = 0;
    std::memcpy(&value, data, sizeof value);
    const auto metric = Quantity::fromMetricValue(value);
    if (std::isnan(value) != !metric.ok()) fail("NaN handling", input);
    if (metric.ok()) {
      checkRoundTrip(*metric, input);
      if (metric->compare(Quantity::fromMilli(metric->milliValue())) != 0) {
        fail("metric value is not a whole number of milli-units", input);
      }
    }
  }
  return 0;
}
