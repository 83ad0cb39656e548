#include "gpuscale/core/rfc3339.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuscale::core {
namespace rfc3339_test {

using std::chrono::microseconds;

// 2026-11-22T00:30:00Z in microseconds since the epoch.
constexpr int64_t kBase = 1'795'307'400'000'000;

WallTime at(int64_t micros) { return WallTime{microseconds{micros}}; }

struct ParseCase {
  const char* what;
  std::string_view text;
  std::optional<int64_t> micros;  // nullopt: rejected
};

TEST(Rfc3339Test, Parse) {
  const ParseCase cases[] = {
      {"metav1.Time", "2026-11-22T00:30:00Z", kBase},
      {"lower-case t and z", "2026-11-22t00:30:00z", kBase},
      {"MicroTime", "2026-11-22T00:30:00.123456Z", kBase + 123'456},
      {"short fraction", "2026-11-22T00:30:00.5Z", kBase + 500'000},
      {"nanoseconds truncated to the clock", "2026-11-22T00:30:00.000001999Z", kBase + 1},
      {"positive offset", "2026-11-22T01:30:00+01:00", kBase},
      {"negative offset", "2026-11-21T23:00:00-01:30", kBase},
      {"leap day", "2024-02-29T00:00:00Z", 1'709'164'800'000'000},
      {"epoch", "1970-01-01T00:00:00Z", 0},
      {"empty", "", std::nullopt},
      {"date only", "2026-11-22", std::nullopt},
      {"space separator", "2026-11-22 00:30:00Z", std::nullopt},
      {"no zone", "2026-11-22T00:30:00", std::nullopt},
      {"dot without digits", "2026-11-22T00:30:00.Z", std::nullopt},
      {"month 13", "2026-13-01T00:00:00Z", std::nullopt},
      {"February 30", "2026-02-30T00:00:00Z", std::nullopt},
      {"hour 24", "2026-11-22T24:00:00Z", std::nullopt},
      {"offset without colon", "2026-11-22T00:30:00+0100", std::nullopt},
      {"offset hour 24", "2026-11-22T00:30:00+24:00", std::nullopt},
      {"trailing text", "2026-11-22T00:30:00Zx", std::nullopt},
      {"signs in digits", "2026-+1-22T00:30:00Z", std::nullopt},
      {"negative hour", "2026-11-22T-1:30:00Z", std::nullopt},
      {"negative year", "-001-11-22T00:30:00Z", std::nullopt},
      // The clock holds nanoseconds in 64 bits: later or earlier times are rejected, not wrapped.
      {"last second the clock holds", "2262-04-11T23:47:15Z", 9'223'372'035'000'000},
      {"after the clock's range", "4052-11-22T00:30:00Z", std::nullopt},
      {"year 9999", "9999-12-31T23:59:59.999999999-23:59", std::nullopt},
      {"before the clock's range", "1677-09-21T00:12:43Z", std::nullopt},
      {"year 0000", "0000-01-01T00:00:00+23:59", std::nullopt},
  };
  for (const auto& c : cases) {
    const auto got = parseRfc3339(c.text);
    if (!c.micros) {
      EXPECT_FALSE(got.has_value()) << c.what;
      continue;
    }
    ASSERT_TRUE(got.has_value()) << c.what;
    EXPECT_EQ(std::chrono::duration_cast<microseconds>(got->time_since_epoch()).count(), *c.micros)
        << c.what;
  }
}

TEST(Rfc3339Test, Format) {
  EXPECT_EQ(formatRfc3339(at(kBase)), "2026-11-22T00:30:00Z");
  EXPECT_EQ(formatRfc3339(at(kBase + 999'999)), "2026-11-22T00:30:00Z") << "fraction truncated";
  EXPECT_EQ(formatRfc3339Micro(at(kBase + 123'456)), "2026-11-22T00:30:00.123456Z");
  EXPECT_EQ(formatRfc3339Micro(at(kBase)), "2026-11-22T00:30:00.000000Z");
  EXPECT_EQ(formatRfc3339(at(0)), "1970-01-01T00:00:00Z");
  EXPECT_EQ(formatRfc3339(at(-1)), "1969-12-31T23:59:59Z") << "floor, not truncation toward 0";
}

TEST(Rfc3339Test, RoundTrip) {
  for (int64_t micros : {int64_t{0}, kBase, kBase + 7, int64_t{7'258'118'399'999'999}}) {
    EXPECT_EQ(parseRfc3339(formatRfc3339Micro(at(micros))), at(micros)) << micros;
  }
}

}  // namespace rfc3339_test
}  // namespace gpuscale::core
