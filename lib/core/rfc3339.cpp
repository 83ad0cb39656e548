#include "gpuscale/core/rfc3339.h"

#include <cstdint>

#include <fmt/format.h>

namespace gpuscale::core {
namespace {

// Exactly `digits` decimal digits (from_chars alone would also take a sign).
bool readDigits(std::string_view& text, std::size_t digits, int& out) {
  if (text.size() < digits) return false;
  out = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    out = out * 10 + (text[i] - '0');
  }
  text.remove_prefix(digits);
  return true;
}

bool expect(std::string_view& text, char upper) {
  if (text.empty()) return false;
  const char lower = static_cast<char>(upper | 0x20);
  if (text[0] != upper && !(upper >= 'A' && upper <= 'Z' && text[0] == lower)) return false;
  text.remove_prefix(1);
  return true;
}

// Microseconds since the epoch split into a civil UTC date-time and the sub-second part.
std::string format(WallTime at, bool micro) {
  using namespace std::chrono;
  const auto us = floor<microseconds>(at);
  const auto day = floor<days>(us);
  const year_month_day ymd{day};
  const hh_mm_ss time{floor<seconds>(us - day)};
  const auto text =
      fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                  time.hours().count(), time.minutes().count(), time.seconds().count());
  if (!micro) return text + "Z";
  return fmt::format("{}.{:06}Z", text, (us - floor<seconds>(us)).count());
}

}  // namespace

std::string formatRfc3339(WallTime at) { return format(at, false); }

std::string formatRfc3339Micro(WallTime at) { return format(at, true); }

std::optional<WallTime> parseRfc3339(std::string_view text) {
  using namespace std::chrono;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (!readDigits(text, 4, y) || !expect(text, '-') || !readDigits(text, 2, mo) ||
      !expect(text, '-') || !readDigits(text, 2, d) || !expect(text, 'T') ||
      !readDigits(text, 2, h) || !expect(text, ':') || !readDigits(text, 2, mi) ||
      !expect(text, ':') || !readDigits(text, 2, s)) {
    return std::nullopt;
  }
  nanoseconds fraction{0};
  if (!text.empty() && text[0] == '.') {
    text.remove_prefix(1);
    std::int64_t scale = 100'000'000;
    std::size_t n = 0;
    for (; n < text.size() && text[n] >= '0' && text[n] <= '9'; ++n) {
      fraction += nanoseconds{(text[n] - '0') * scale};
      scale /= 10;
    }
    if (n == 0) return std::nullopt;
    text.remove_prefix(n);
  }
  int offsetMinutes = 0;
  if (text == "Z" || text == "z") {
    text = {};
  } else if (text.size() == 6 && (text[0] == '+' || text[0] == '-')) {
    const int sign = text[0] == '-' ? -1 : 1;
    text.remove_prefix(1);
    int oh = 0, om = 0;
    if (!readDigits(text, 2, oh) || !expect(text, ':') || !readDigits(text, 2, om)) {
      return std::nullopt;
    }
    if (oh > 23 || om > 59) return std::nullopt;
    offsetMinutes = sign * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)},
                           day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return std::nullopt;
  const sys_seconds whole =
      sys_days{ymd} + hours{h} + minutes{mi} + seconds{s} - minutes{offsetMinutes};
  // The system clock counts nanoseconds in 64 bits (years 1677 to 2262): a time it cannot hold is
  // out of range, and converting it would overflow.
  if (whole <= floor<seconds>(WallTime::min()) || whole >= floor<seconds>(WallTime::max())) {
    return std::nullopt;
  }
  return time_point_cast<WallTime::duration>(whole) + duration_cast<WallTime::duration>(fraction);
}

}  // namespace gpuscale::core
