#include "quantity.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

namespace gpuscale::partition {

std::optional<double> parseQuantity(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, double>, 13> kSuffixes{{
      {"Ki", 1024.0},
      {"Mi", 1048576.0},
      {"Gi", 1073741824.0},
      {"Ti", 1099511627776.0},
      {"Pi", 1125899906842624.0},
      {"Ei", 1152921504606846976.0},
      {"m", 1e-3},
      {"k", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"E", 1e18},
  }};
  double scale = 1.0;
  for (const auto& [suffix, factor] : kSuffixes) {
    if (text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix) {
      text.remove_suffix(suffix.size());
      scale = factor;
      break;
    }
  }
  if (text.empty()) return std::nullopt;
  // Only plain decimals: no exponents, signs other than a leading one, or spaces.
  for (std::size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    bool sign = i == 0 && (ch == '-' || ch == '+');
    if (!sign && ch != '.' && (ch < '0' || ch > '9')) return std::nullopt;
  }
  std::string digits(text.front() == '+' ? text.substr(1) : text);
  double value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value * scale;
}

std::optional<std::chrono::milliseconds> parseDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text == "0") return std::chrono::milliseconds{0};
  std::chrono::milliseconds total{0};
  while (!text.empty()) {
    long long n = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || n < 0) return std::nullopt;
    text.remove_prefix(static_cast<std::size_t>(ptr - text.data()));
    long long unitMs = 0;
    if (text.substr(0, 2) == "ms") {
      unitMs = 1;
      text.remove_prefix(2);
    } else if (!text.empty() && (text[0] == 's' || text[0] == 'm' || text[0] == 'h')) {
      unitMs = text[0] == 's' ? 1000 : text[0] == 'm' ? 60000 : 3600000;
      text.remove_prefix(1);
    } else {
      return std::nullopt;
    }
    total += std::chrono::milliseconds{n * unitMs};
  }
  return total;
}

}  // namespace gpuscale::partition

namespace gpuscale::partition {
namespace {

bool readInt(std::string_view& text, std::size_t digits, int& out) {
  if (text.size() < digits) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, out);
  if (ec != std::errc() || ptr != text.data() + digits) return false;
  text.remove_prefix(digits);
  return true;
}

bool expect(std::string_view& text, char ch) {
  if (text.empty() || (text[0] != ch && !(ch == 'T' && text[0] == 't'))) return false;
  text.remove_prefix(1);
  return true;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> parseTimestamp(std::string_view text) {
  using namespace std::chrono;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!readInt(text, 4, y) || !expect(text, '-') || !readInt(text, 2, mo) || !expect(text, '-') ||
      !readInt(text, 2, d) || !expect(text, 'T') || !readInt(text, 2, h) || !expect(text, ':') ||
      !readInt(text, 2, mi) || !expect(text, ':') || !readInt(text, 2, s)) {
    return std::nullopt;
  }
  if (!text.empty() && text[0] == '.') {
    text.remove_prefix(1);
    while (!text.empty() && text[0] >= '0' && text[0] <= '9') text.remove_prefix(1);
  }
  int offsetMinutes = 0;
  if (text == "Z" || text == "z") {
    text = {};
  } else if (text.size() == 6 && (text[0] == '+' || text[0] == '-')) {
    int sign = text[0] == '-' ? -1 : 1;
    text.remove_prefix(1);
    int oh = 0, om = 0;
    if (!readInt(text, 2, oh) || !expect(text, ':') || !readInt(text, 2, om)) return std::nullopt;
    offsetMinutes = sign * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return std::nullopt;
  return sys_days{ymd} + hours{h} + minutes{mi} + seconds{s} - minutes{offsetMinutes};
}

}  // namespace gpuscale::partition
