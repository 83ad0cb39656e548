#include "gpuscale/core/quantity.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "gpuscale/core/ascii.h"
#include "gpuscale/core/go_quote.h"

namespace gpuscale::core {
namespace {

constexpr int64_t kNanoExponent = -9;
// Far from the int32 limits, so canonicalisation (which lowers the exponent by up to 2) cannot
// overflow.
constexpr int64_t kMaxExponent = 1'000'000'000;
constexpr uint64_t kInt64MaxMagnitude = std::numeric_limits<int64_t>::max();
constexpr uint64_t kInt64MinMagnitude = kInt64MaxMagnitude + 1;

constexpr std::string_view kFormatError =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kSuffixError = "unable to parse quantity's suffix";

uint64_t magnitudeOf(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

// An unsigned decimal: `digits` (most significant first, no leading zeros, "" for zero) ×
// 10^exponent.
struct Decimal {
  std::string digits;
  int64_t exponent = 0;

  bool zero() const { return digits.empty(); }
};

Decimal decimalOf(uint64_t magnitude, int64_t exponent) {
  return {magnitude == 0 ? std::string() : std::to_string(magnitude), exponent};
}

void stripTrailingZeros(Decimal& d) {
  const size_t last = d.digits.find_last_not_of('0');
  const size_t keep = last == std::string::npos ? 0 : last + 1;
  d.exponent += static_cast<int64_t>(d.digits.size() - keep);
  d.digits.resize(keep);
  if (d.digits.empty()) d.exponent = 0;
}

void stripLeadingZeros(std::string& digits) {
  const size_t first = digits.find_first_not_of('0');
  digits.erase(0, first == std::string::npos ? digits.size() : first);
}

void multiplyDigits(std::string& digits, uint32_t factor) {
  uint64_t carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    carry += static_cast<uint64_t>(*it - '0') * factor;
    *it = static_cast<char>('0' + carry % 10);
    carry /= 10;
  }
  for (; carry > 0; carry /= 10) digits.insert(digits.begin(), static_cast<char>('0' + carry % 10));
  stripLeadingZeros(digits);
}

void incrementDigits(std::string& digits) {
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (*it != '9') {
      ++*it;
      return;
    }
    *it = '0';
  }
  digits.insert(digits.begin(), '1');
}

// Kubernetes keeps values only down to nano and rounds finer non-zero values away from zero.
void roundUpToNano(Decimal& d) {
  stripTrailingZeros(d);
  if (d.zero() || d.exponent >= kNanoExponent) return;
  // Every dropped digit run ends in a non-zero digit (trailing zeros are gone), so the value was
  // inexact.
  const auto drop = static_cast<uint64_t>(kNanoExponent - d.exponent);
  if (drop >= d.digits.size()) {
    d.digits = "1";
  } else {
    d.digits.resize(d.digits.size() - drop);
    incrementDigits(d.digits);
    stripLeadingZeros(d.digits);
  }
  d.exponent = kNanoExponent;
  stripTrailingZeros(d);
}

// Compares two decimals whose trailing zeros are stripped.
int compareDecimal(const Decimal& a, const Decimal& b) {
  if (a.zero() || b.zero()) return a.zero() == b.zero() ? 0 : (a.zero() ? -1 : 1);
  const int64_t orderA = static_cast<int64_t>(a.digits.size()) + a.exponent;
  const int64_t orderB = static_cast<int64_t>(b.digits.size()) + b.exponent;
  if (orderA != orderB) return orderA < orderB ? -1 : 1;
  const int c = a.digits.compare(b.digits);  // same order: digit-by-digit, a prefix is smaller
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// The integer digits × 10^exponent (exponent ≥ 0), or nullopt beyond uint64.
std::optional<uint64_t> integerValue(const Decimal& d) {
  if (d.zero()) return 0;
  if (d.exponent < 0 || static_cast<int64_t>(d.digits.size()) + d.exponent > 20)
    return std::nullopt;
  uint64_t v = 0;
  const auto push = [&v](unsigned digit) {
    if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
    v = v * 10 + digit;
    return true;
  };
  for (char c : d.digits) {
    if (!push(static_cast<unsigned>(c - '0'))) return std::nullopt;
  }
  for (int64_t i = 0; i < d.exponent; ++i) {
    if (!push(0)) return std::nullopt;
  }
  return v;
}

struct Suffix {
  int base;  // 10 or 2
  int64_t exponent;
  Quantity::Format format;
};

std::optional<Suffix> interpretSuffix(std::string_view suffix) {
  static constexpr std::pair<std::string_view, int> kDecimal[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18},
  };
  static constexpr std::pair<std::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60},
  };
  for (const auto& [name, exponent] : kDecimal) {
    if (suffix == name) return Suffix{10, exponent, Quantity::Format::kDecimalSI};
  }
  for (const auto& [name, exponent] : kBinary) {
    if (suffix == name) return Suffix{2, exponent, Quantity::Format::kBinarySI};
  }
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return std::nullopt;
  std::string_view number = suffix.substr(1);
  const bool negative = number[0] == '-';
  if (number[0] == '-' || number[0] == '+') number.remove_prefix(1);
  if (number.empty()) return std::nullopt;
  int64_t exponent = 0;
  for (char c : number) {
    if (!isAsciiDigit(c)) return std::nullopt;
    exponent = exponent * 10 + (c - '0');
    if (exponent > kMaxExponent) return std::nullopt;
  }
  return Suffix{10, negative ? -exponent : exponent, Quantity::Format::kDecimalExponent};
}

// The parts of a quantity string, split as apimachinery's parseQuantityString does.
struct QuantityParts {
  bool negative = false;
  std::string_view whole;
  std::string_view fraction;
  std::string_view suffix;
};

// Returns the error text, or empty on success.
std::string_view splitQuantity(std::string_view text, QuantityParts& parts) {
  size_t pos = 0;
  if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) {
    parts.negative = text[pos] == '-';
    ++pos;
  }
  const auto digitsFrom = [&text](size_t from) {
    size_t end = from;
    while (end < text.size() && isAsciiDigit(text[end])) ++end;
    return end;
  };
  size_t end = digitsFrom(pos);
  parts.whole = text.substr(pos, end - pos);
  pos = end;
  if (pos < text.size() && text[pos] == '.') {
    end = digitsFrom(++pos);
    parts.fraction = text.substr(pos, end - pos);
    pos = end;
  }
  const size_t suffixStart = pos;
  while (pos < text.size() &&
         std::string_view("eEinumkKMGTP").find(text[pos]) != std::string::npos) {
    ++pos;
  }
  if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) ++pos;
  if (digitsFrom(pos) != text.size()) return kFormatError;
  parts.suffix = text.substr(suffixStart);
  // apimachinery reads "k", "-" and "." as zero; a number without digits is rejected here.
  if (parts.whole.empty() && parts.fraction.empty()) return "the number has no digits";
  return {};
}

Result<Quantity> quantityError(std::string_view text, std::string_view why) {
  return Status::badRequest("invalid quantity " + goQuote(text) + ": " + std::string(why));
}

// Canonical DecimalSI/DecimalExponent text of a non-zero magnitude with trailing zeros stripped.
std::string canonicalDecimal(bool negative, Decimal d, Quantity::Format format) {
  // Lower the exponent to a multiple of 3 (floor), moving the difference into the digits.
  const int64_t excess = ((d.exponent % 3) + 3) % 3;
  d.digits.append(static_cast<size_t>(excess), '0');
  d.exponent -= excess;
  std::string out = negative ? "-" : "";
  out += d.digits;
  static constexpr std::string_view kSuffixes[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  const int64_t index = d.exponent / 3 + 3;
  if (format == Quantity::Format::kDecimalSI && index >= 0 && index < 10) {
    out += kSuffixes[index];
  } else if (d.exponent != 0) {
    // DecimalExponent, and DecimalSI beyond "E" (as newer apimachinery does instead of dropping
    // it).
    out += 'e';
    out += std::to_string(d.exponent);
  }
  return out;
}

// Rounds magnitude × 10^shift to an integer away from zero and clamps it to the int64 range.
int64_t saturatedInteger(bool negative, Decimal d, int64_t shift) {
  const uint64_t limit = negative ? kInt64MinMagnitude : kInt64MaxMagnitude;
  stripTrailingZeros(d);  // afterwards any dropped digit is non-zero, so dropping digits rounds up
  d.exponent += shift;
  uint64_t magnitude = 0;
  if (d.exponent >= 0) {
    const std::optional<uint64_t> v = integerValue(d);
    magnitude = v && *v <= limit ? *v : limit;
  } else {
    const auto drop = static_cast<uint64_t>(-d.exponent);
    if (drop >= d.digits.size()) {
      magnitude = 1;
    } else {
      d.digits.resize(d.digits.size() - drop);
      d.exponent = 0;
      const std::optional<uint64_t> v = integerValue(d);
      magnitude = v && *v < limit ? *v + 1 : limit;
    }
  }
  return negative ? static_cast<int64_t>(uint64_t{0} - magnitude) : static_cast<int64_t>(magnitude);
}

}  // namespace

Quantity Quantity::fromMilli(int64_t milli, Format format) { return {milli, -3, format}; }

Quantity Quantity::fromNano(int64_t nano, Format format) { return {nano, -9, format}; }

Quantity Quantity::fromInt(int64_t units, Format format) { return {units, 0, format}; }

Result<Quantity> Quantity::fromMetricValue(double value) {
  if (std::isnan(value)) return Status::invalid("value is NaN");
  // One IEEE multiply then truncation, as Go's int64(v*1000.0); the build disables FMA contraction.
  const double milli = value * 1000.0;
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (milli >= kTwoTo63 || milli < -kTwoTo63) {
    Quantity q = fromMilli(milli > 0 ? std::numeric_limits<int64_t>::max()
                                     : std::numeric_limits<int64_t>::min());
    q.saturated_ = true;
    return q;
  }
  return fromMilli(static_cast<int64_t>(milli));
}

Result<Quantity> Quantity::parse(std::string_view text) {
  if (text.empty()) return quantityError(text, kFormatError);
  QuantityParts parts;
  if (const std::string_view why = splitQuantity(text, parts); !why.empty()) {
    return quantityError(text, why);
  }
  const std::optional<Suffix> suffix = interpretSuffix(parts.suffix);
  if (!suffix) return quantityError(text, kSuffixError);

  Decimal d{std::string(parts.whole) + std::string(parts.fraction),
            -static_cast<int64_t>(parts.fraction.size())};
  stripLeadingZeros(d.digits);
  Format format = suffix->format;
  if (suffix->base == 10) {
    d.exponent += suffix->exponent;
  } else {
    for (int64_t i = 0; i < suffix->exponent; i += 10) multiplyDigits(d.digits, 1024);
  }
  roundUpToNano(d);
  if (d.zero()) return Quantity(0, 0, format);
  if (format == Format::kBinarySI) {
    // apimachinery silently caps binary quantities at 2^63-1 ("8Ei" parses as 2^63-1).
    const Decimal cap = decimalOf(kInt64MaxMagnitude, 0);
    if (compareDecimal(d, cap) > 0) d = cap;
    if (compareDecimal(d, Decimal{"1", 0}) < 0) format = Format::kDecimalSI;
  }
  if (d.exponent > kMaxExponent) return quantityError(text, "exponent out of range");
  const std::optional<uint64_t> mantissa = integerValue(Decimal{d.digits, 0});
  if (!mantissa || *mantissa > (parts.negative ? kInt64MinMagnitude : kInt64MaxMagnitude)) {
    return quantityError(text, "more significant digits than an int64 holds");
  }
  const auto signedMantissa = parts.negative ? static_cast<int64_t>(uint64_t{0} - *mantissa)
                                             : static_cast<int64_t>(*mantissa);
  return Quantity(signedMantissa, static_cast<int32_t>(d.exponent), format);
}

int64_t Quantity::value() const {
  return saturatedInteger(mantissa_ < 0, decimalOf(magnitudeOf(mantissa_), exponent_), 0);
}

int64_t Quantity::milliValue() const {
  return saturatedInteger(mantissa_ < 0, decimalOf(magnitudeOf(mantissa_), exponent_), 3);
}

double Quantity::toDouble() const {
  if (mantissa_ == 0) return 0;
  const std::string text = std::to_string(mantissa_) + "e" + std::to_string(exponent_);
  double out = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves `out` untouched on overflow or underflow.
    if (exponent_ < 0) return mantissa_ < 0 ? -0.0 : 0.0;
    return mantissa_ < 0 ? -HUGE_VAL : HUGE_VAL;
  }
  return out;
}

std::string Quantity::toString() const {
  if (mantissa_ == 0) return "0";
  const bool negative = mantissa_ < 0;
  Decimal d = decimalOf(magnitudeOf(mantissa_), exponent_);
  stripTrailingZeros(d);
  if (format_ == Format::kBinarySI && compareDecimal(d, Decimal{"1024", 0}) >= 0 &&
      d.exponent >= 0) {
    // Parsing caps binary quantities below 2^63, so the whole value fits.
    uint64_t v = integerValue(d).value_or(kInt64MaxMagnitude);
    static constexpr std::string_view kBinarySuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    size_t power = 0;
    while (v >= 10 && v % 1024 == 0 && power + 1 < std::size(kBinarySuffixes)) {
      v /= 1024;
      ++power;
    }
    return (negative ? "-" : "") + std::to_string(v) + std::string(kBinarySuffixes[power]);
  }
  // Binary values below 1024 or with a fraction print in DecimalSI form, as apimachinery does.
  return canonicalDecimal(negative, std::move(d),
                          format_ == Format::kBinarySI ? Format::kDecimalSI : format_);
}

int Quantity::compare(const Quantity& other) const {
  const auto sign = [](int64_t m) { return m < 0 ? -1 : (m > 0 ? 1 : 0); };
  const int signA = sign(mantissa_);
  const int signB = sign(other.mantissa_);
  if (signA != signB) return signA < signB ? -1 : 1;
  Decimal a = decimalOf(magnitudeOf(mantissa_), exponent_);
  Decimal b = decimalOf(magnitudeOf(other.mantissa_), other.exponent_);
  stripTrailingZeros(a);
  stripTrailingZeros(b);
  return signA * compareDecimal(a, b);
}

std::string formatMilliDecimalSI(int64_t milli) { return Quantity::fromMilli(milli).toString(); }

}  // namespace gpuscale::core
