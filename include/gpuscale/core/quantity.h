// Quantity: Kubernetes `resource.Quantity` values as the metrics APIs and the reconciler need them.
//
// Two jobs:
//  1. Metric values. prometheus-adapter turns a Prometheus float into
//  `NewMilliQuantity(int64(v*1000), DecimalSI)`
//     and serialises the canonical DecimalSI form ("500m", "1k", "1004m" for 1.005).
//     fromMetricValue() does the same multiply-then-truncate, with two deliberate differences that
//     are documented contracts:
//       - NaN is an error value (the caller decides; the adapter never reports a made-up 0 for it);
//       - ±Inf and finite values beyond the int64 milli range saturate to INT64_MAX/INT64_MIN milli
//       units
//         instead of Go amd64's wrap to "-9223372036854775808m".
//  2. Resource amounts in Kubernetes objects ("7", "40Gi", "500m", "1.5", "2e3"): parse() accepts
//  the full
//     Kubernetes quantity grammar (DecimalSI suffixes n u m "" k M G T P E, BinarySI Ki Mi Gi Ti Pi
//     Ei, decimal exponents e/E) and keeps the value exactly as mantissa × 10^exponent while it
//     fits.
//
// Thread safety: immutable value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuscale/core/result.h"

namespace gpuscale::core {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  // Zero.
  Quantity() = default;

  // `milli` thousandths (NewMilliQuantity(milli, format)).
  static Quantity fromMilli(int64_t milli, Format format = Format::kDecimalSI);
  // `nano` billionths (NewScaledQuantity(nano, -9); metrics-server's nanocores).
  static Quantity fromNano(int64_t nano, Format format = Format::kDecimalSI);
  // A whole number of units (NewQuantity(units, format); BinarySI for byte counts in
  // metrics.k8s.io).
  static Quantity fromInt(int64_t units, Format format = Format::kDecimalSI);

  // prometheus-adapter's conversion of a sample value (see the file comment). NaN gives
  // Status::invalid("value is NaN"); every other input succeeds (saturating when out of range).
  static Result<Quantity> fromMetricValue(double value);

  // Parses a Kubernetes quantity string. Errors (Status::badRequest) name the text and what is
  // wrong. As apimachinery: values finer than nano round away from zero to nano ("0.5n" is "1n"),
  // and binary quantities are capped at 2^63-1 ("8Ei"). Unlike apimachinery, which keeps arbitrary
  // precision and reads "k", "-" and "." as zero: a number needs at least one digit, the mantissa
  // (after trailing zeros move into the exponent) must fit an int64, and exponents beyond ±10^9 are
  // errors instead of wrapping.
  static Result<Quantity> parse(std::string_view text);

  // The value rounded up to a whole number (Kubernetes `Value()`), saturating at the int64 range.
  // "Up" is away from zero ("-1.5" gives -2), as apimachinery's int64 path; its arbitrary-precision
  // path rounds some negative values differently, and it wraps where this saturates.
  int64_t value() const;
  // The value in thousandths rounded up (Kubernetes `MilliValue()`), with the same rounding and
  // saturation.
  int64_t milliValue() const;
  // The value as a double (may lose precision).
  double toDouble() const;

  // True when fromMetricValue() had to clamp (±Inf or out of range).
  bool saturated() const { return saturated_; }
  Format format() const { return format_; }

  // Canonical string as apimachinery's Quantity.String() prints it for this format: DecimalSI
  // "1500m", "1k",
  // "-250m", "0"; BinarySI "1Ki", "256Mi" (and DecimalSI form for values that are not whole);
  // DecimalExponent "1e3". DecimalSI beyond "E" uses an exponent ("1e21"), as current apimachinery
  // does. Unlike apimachinery, a parsed string that was already canonical-looking ("+1", "1E3") is
  // not echoed back: the canonical form ("1", "1e3") is always printed.
  std::string toString() const;

  // Compares values (formats are ignored).
  friend bool operator==(const Quantity& a, const Quantity& b) { return a.compare(b) == 0; }
  friend bool operator<(const Quantity& a, const Quantity& b) { return a.compare(b) < 0; }
  int compare(const Quantity& other) const;

 private:
  Quantity(int64_t mantissa, int32_t exponent, Format format)
      : mantissa_(mantissa), exponent_(exponent), format_(format) {}

  int64_t mantissa_ = 0;  // value = mantissa_ × 10^exponent_
  int32_t exponent_ = 0;
  Format format_ = Format::kDecimalSI;
  bool saturated_ = false;
};

// Shorthand for the adapter: the canonical DecimalSI string of `milli` thousandths ("1004m", "1k",
// "0").
std::string formatMilliDecimalSI(int64_t milli);

}  // namespace gpuscale::core
