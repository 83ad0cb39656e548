#include "gpuscale/core/duration.h"

#include <cstdint>
#include <optional>

#include "gpuscale/core/ascii.h"
#include "gpuscale/core/go_quote.h"

namespace gpuscale::core {
namespace {

constexpr uint64_t kTwoTo63 = uint64_t{1} << 63;

struct Unit {
  std::string_view name;
  uint64_t nanos;
};

constexpr Unit kGoUnits[] = {
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // U+00B5 MICRO SIGN
    {"\xCE\xBCs", 1'000},  // U+03BC GREEK SMALL LETTER MU
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
};

// Prometheus units, biggest first: a duration must use them in this order.
constexpr Unit kPrometheusUnits[] = {
    {"y", 365 * 86'400'000'000'000ULL},
    {"w", 7 * 86'400'000'000'000ULL},
    {"d", 86'400'000'000'000ULL},
    {"h", 3'600'000'000'000ULL},
    {"m", 60'000'000'000ULL},
    {"s", 1'000'000'000ULL},
    {"ms", 1'000'000ULL},
};

Status invalidGoDuration(std::string_view text) {
  return Status::badRequest("time: invalid duration " + goQuote(text));
}

// Consumes leading digits as time.ParseDuration's leadingInt does: nullopt when the value exceeds
// 2^63.
std::optional<uint64_t> leadingInt(std::string_view& s) {
  uint64_t x = 0;
  size_t i = 0;
  for (; i < s.size() && isAsciiDigit(s[i]); ++i) {
    if (x > kTwoTo63 / 10) return std::nullopt;
    x = x * 10 + static_cast<uint64_t>(s[i] - '0');
    if (x > kTwoTo63) return std::nullopt;
  }
  s.remove_prefix(i);
  return x;
}

struct Fraction {
  uint64_t digits = 0;
  double scale = 1;
};

// Consumes leading digits after a '.', keeping as many as fit (extra digits are ignored, not
// errors).
Fraction leadingFraction(std::string_view& s) {
  Fraction f;
  bool overflow = false;
  size_t i = 0;
  for (; i < s.size() && isAsciiDigit(s[i]); ++i) {
    if (overflow) continue;
    if (f.digits > (kTwoTo63 - 1) / 10) {
      overflow = true;
      continue;
    }
    const uint64_t y = f.digits * 10 + static_cast<uint64_t>(s[i] - '0');
    if (y > kTwoTo63) {
      overflow = true;
      continue;
    }
    f.digits = y;
    f.scale *= 10;
  }
  s.remove_prefix(i);
  return f;
}

const Unit* findUnit(std::string_view name, const Unit* begin, const Unit* end) {
  for (const Unit* u = begin; u != end; ++u) {
    if (u->name == name) return u;
  }
  return nullptr;
}

// Writes, back to front, the fractional digits of v / 10^precision (".25"), omitting trailing zeros
// and the dot when there are none; returns the integer part v / 10^precision.
uint64_t prependFraction(std::string& reversed, uint64_t v, int precision) {
  bool print = false;
  for (int i = 0; i < precision; ++i) {
    const auto digit = static_cast<char>(v % 10);
    print = print || digit != 0;
    if (print) reversed += static_cast<char>('0' + digit);
    v /= 10;
  }
  if (print) reversed += '.';
  return v;
}

void prependInt(std::string& reversed, uint64_t v) {
  do {
    reversed += static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
}

}  // namespace

Result<Duration> parseGoDuration(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return Duration{0};
  if (s.empty()) return invalidGoDuration(text);
  uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || isAsciiDigit(s[0]))) return invalidGoDuration(text);
    const size_t before = s.size();
    const std::optional<uint64_t> whole = leadingInt(s);
    if (!whole) return invalidGoDuration(text);
    const bool hasWhole = s.size() != before;
    Fraction fraction;
    bool hasFraction = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      const size_t afterDot = s.size();
      fraction = leadingFraction(s);
      hasFraction = s.size() != afterDot;
    }
    if (!hasWhole && !hasFraction) return invalidGoDuration(text);

    size_t unitLength = 0;
    while (unitLength < s.size() && s[unitLength] != '.' && !isAsciiDigit(s[unitLength]))
      ++unitLength;
    if (unitLength == 0) {
      return Status::badRequest("time: missing unit in duration " + goQuote(text));
    }
    const std::string_view unitName = s.substr(0, unitLength);
    s.remove_prefix(unitLength);
    const Unit* unit = findUnit(unitName, std::begin(kGoUnits), std::end(kGoUnits));
    if (unit == nullptr) {
      return Status::badRequest("time: unknown unit " + goQuote(unitName) + " in duration " +
                                goQuote(text));
    }
    if (*whole > kTwoTo63 / unit->nanos) return invalidGoDuration(text);
    uint64_t v = *whole * unit->nanos;
    if (fraction.digits > 0) {
      // As Go: a double is exact enough for fractions of the largest unit (3.6e12 ns per hour).
      v += static_cast<uint64_t>(static_cast<double>(fraction.digits) *
                                 (static_cast<double>(unit->nanos) / fraction.scale));
      if (v > kTwoTo63) return invalidGoDuration(text);
    }
    total += v;
    if (total > kTwoTo63) return invalidGoDuration(text);
  }
  if (negative) return Duration{static_cast<int64_t>(-total)};
  if (total > kTwoTo63 - 1) return invalidGoDuration(text);
  return Duration{static_cast<int64_t>(total)};
}

Result<Duration> parsePrometheusDuration(std::string_view text) {
  if (text == "0") return Duration{0};
  if (text.empty()) return Status::badRequest("empty duration string");
  const auto invalid = [&] {
    return Status::badRequest("not a valid duration string: " + goQuote(text));
  };
  std::string_view s = text;
  uint64_t total = 0;
  const Unit* previous = nullptr;
  while (!s.empty()) {
    if (!isAsciiDigit(s[0])) return invalid();
    uint64_t v = 0;
    size_t i = 0;
    for (; i < s.size() && isAsciiDigit(s[i]); ++i) {
      const auto digit = static_cast<uint64_t>(s[i] - '0');
      if (v > (UINT64_MAX - digit) / 10) return invalid();
      v = v * 10 + digit;
    }
    s.remove_prefix(i);
    size_t unitLength = 0;
    while (unitLength < s.size() && !isAsciiDigit(s[unitLength])) ++unitLength;
    if (unitLength == 0) return invalid();
    const std::string_view unitName = s.substr(0, unitLength);
    s.remove_prefix(unitLength);
    const Unit* unit = findUnit(unitName, std::begin(kPrometheusUnits), std::end(kPrometheusUnits));
    if (unit == nullptr) {
      return Status::badRequest("unknown unit " + goQuote(unitName) + " in duration " +
                                goQuote(text));
    }
    if (previous != nullptr && unit <= previous) return invalid();
    previous = unit;
    if (v > kTwoTo63 / unit->nanos) return Status::badRequest("duration out of range");
    total += v * unit->nanos;
    if (total > kTwoTo63 - 1) return Status::badRequest("duration out of range");
  }
  return Duration{static_cast<int64_t>(total)};
}

std::string formatGoDuration(Duration d) {
  const int64_t count = d.count();
  const bool negative = count < 0;
  // Two's-complement negation in unsigned arithmetic also handles the most negative duration.
  uint64_t u = negative ? uint64_t{0} - static_cast<uint64_t>(count) : static_cast<uint64_t>(count);
  // Built back to front, then reversed.
  std::string reversed;
  if (u < 1'000'000'000) {
    if (u == 0) return "0s";
    int precision = 0;
    if (u < 1'000) {
      reversed = "sn";
    } else if (u < 1'000'000) {
      reversed = "s\xB5\xC2";  // "µs", reversed byte-wise
      precision = 3;
    } else {
      reversed = "sm";
      precision = 6;
    }
    u = prependFraction(reversed, u, precision);
    prependInt(reversed, u);
  } else {
    reversed = "s";
    u = prependFraction(reversed, u, 9);
    prependInt(reversed, u % 60);
    u /= 60;
    if (u > 0) {
      reversed += 'm';
      prependInt(reversed, u % 60);
      u /= 60;
      if (u > 0) {
        reversed += 'h';
        prependInt(reversed, u);
      }
    }
  }
  if (negative) reversed += '-';
  return {reversed.rbegin(), reversed.rend()};
}

}  // namespace gpuscale::core
