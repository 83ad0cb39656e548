#include "quantity.h"

#include "gpuscale/core/duration.h"
#include "gpuscale/core/quantity.h"

#include <array>
#include <charconv>
#include <cmath>
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
