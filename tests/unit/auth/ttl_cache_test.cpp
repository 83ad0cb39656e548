#include "gpuscale/auth/ttl_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuscale::auth {
namespace ttl_cache_test {

using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// A clock that moves only when the test says so.
struct FakeClock {
  Clock::time_point now{};
  CacheClock fn() {
    return [this] { return now; };
  }
};

// One step of a scenario: advance the clock, then put or get.
struct Step {
  int advanceSeconds = 0;
  enum { kPut, kGet } op = kGet;
  std::string key;
  int value = 0;       // put: the value; get: the expected value (-1: expect absent)
  int ttlSeconds = 0;  // put only
};

struct Case {
  const char* what;
  size_t maxEntries;
  std::vector<Step> steps;
};

TEST(TtlCacheTest, EntriesLiveForTheirTtlAndTheBoundHolds) {
  const Case cases[] = {
      {"an entry is served until its TTL ends, then gone",
       8,
       {{0, Step::kPut, "a", 1, 10}, {9, Step::kGet, "a", 1}, {1, Step::kGet, "a", -1}}},
      {"a shorter TTL (denied answers) ends sooner than a longer one",
       8,
       {{0, Step::kPut, "allowed", 1, 10},
        {0, Step::kPut, "denied", 0, 5},
        {5, Step::kGet, "denied", -1},
        {0, Step::kGet, "allowed", 1}}},
      {"a zero TTL caches nothing", 8, {{0, Step::kPut, "a", 1, 0}, {0, Step::kGet, "a", -1}}},
      {"putting again replaces the value and restarts the TTL",
       8,
       {{0, Step::kPut, "a", 1, 10},
        {8, Step::kPut, "a", 2, 10},
        {8, Step::kGet, "a", 2},
        {2, Step::kGet, "a", -1}}},
      {"when full, the entry expiring soonest makes room",
       2,
       {{0, Step::kPut, "long", 1, 30},
        {0, Step::kPut, "short", 2, 10},
        {0, Step::kPut, "new", 3, 20},
        {0, Step::kGet, "short", -1},
        {0, Step::kGet, "long", 1},
        {0, Step::kGet, "new", 3}}},
      {"when full, an expired entry goes before a live one",
       2,
       {{0, Step::kPut, "old", 1, 1},
        {0, Step::kPut, "live", 2, 5},
        {2, Step::kPut, "new", 3, 1},
        {0, Step::kGet, "live", 2},
        {0, Step::kGet, "new", 3}}},
      {"a cache of size zero holds nothing",
       0,
       {{0, Step::kPut, "a", 1, 10}, {0, Step::kGet, "a", -1}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    FakeClock clock;
    TtlCache<int> cache(c.maxEntries, clock.fn());
    for (const Step& step : c.steps) {
      clock.now += seconds(step.advanceSeconds);
      if (step.op == Step::kPut) {
        cache.put(step.key, step.value, seconds(step.ttlSeconds));
        EXPECT_LE(cache.size(), c.maxEntries);
        continue;
      }
      const auto got = cache.get(step.key);
      if (step.value < 0) {
        EXPECT_FALSE(got.has_value()) << step.key;
      } else {
        ASSERT_TRUE(got.has_value()) << step.key;
        EXPECT_EQ(*got, step.value) << step.key;
      }
    }
  }
}

TEST(TtlCacheTest, ExpiredEntriesGoWhenOthersArePutNotOnlyWhenFull) {
  FakeClock clock;
  TtlCache<int> cache(4096, clock.fn());
  // Ever new keys, one a second, each kept 10 s (junk tokens): the cache holds the last ten.
  for (int i = 0; i < 100; ++i) {
    cache.put("junk-" + std::to_string(i), 0, seconds(10));
    clock.now += seconds(1);
  }
  EXPECT_EQ(cache.size(), 10u);
}

}  // namespace ttl_cache_test
}  // namespace gpuscale::auth
