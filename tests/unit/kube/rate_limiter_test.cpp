#include "gpuscale/kube/rate_limiter.h"

#include <gtest/gtest.h>

namespace gpuscale::kube {
namespace rate_limiter_test {

using Clock = RateLimiter::Clock;
using std::chrono::milliseconds;

TEST(RateLimiterTest, BurstThenQps) {
  RateLimiter limiter(5, 10);
  const auto t0 = Clock::now();
  int granted = 0;
  while (limiter.tryAcquire(t0)) ++granted;
  EXPECT_EQ(granted, 10);
  EXPECT_FALSE(limiter.tryAcquire(t0 + milliseconds(100)));  // 0.5 token
  EXPECT_TRUE(limiter.tryAcquire(t0 + milliseconds(250)));   // 1.25 tokens at 5/s
  EXPECT_FALSE(limiter.tryAcquire(t0 + milliseconds(250)));  // 0.25 left
  EXPECT_GT(limiter.waitTime(t0 + milliseconds(250)), milliseconds(100));
  EXPECT_LT(limiter.waitTime(t0 + milliseconds(250)), milliseconds(200));
}

TEST(RateLimiterTest, SavesAtMostBurst) {
  RateLimiter limiter(100, 3);
  const auto t0 = Clock::now();
  int granted = 0;
  while (limiter.tryAcquire(t0 + std::chrono::hours(1))) ++granted;
  EXPECT_EQ(granted, 3);
}

TEST(RateLimiterTest, ZeroQpsIsUnlimited) {
  RateLimiter limiter(0, 1);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.tryAcquire());
  EXPECT_TRUE(limiter.acquire());
}

TEST(RateLimiterTest, AcquireGivesUpWhenStopped) {
  RateLimiter limiter(0.001, 1);
  ASSERT_TRUE(limiter.acquire());
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(limiter.acquire(stop.get_token()));
}

TEST(RateLimiterTest, AcquireUntilGivingUpDoesNotWaitForATokenThatWouldComeTooLate) {
  RateLimiter limiter(0.001, 1);  // the next token in ~17 minutes
  ASSERT_TRUE(limiter.acquire());
  // Gives up at once (no waiting until `until` either): the test would time out otherwise.
  EXPECT_FALSE(
      limiter.acquireUntil(Clock::now() + std::chrono::minutes(1), {}, RateLimiter::Late::kGiveUp));
  RateLimiter fast(1000, 1);
  ASSERT_TRUE(fast.acquire());
  EXPECT_TRUE(
      fast.acquireUntil(Clock::now() + std::chrono::seconds(10), {}, RateLimiter::Late::kGiveUp));
}

TEST(RateLimiterTest, AcquireUntilGivesUpAtTheDeadlineAndKeepsNoToken) {
  RateLimiter limiter(0.001, 1);                    // one token, the next in 1000 s
  ASSERT_TRUE(limiter.acquireUntil(Clock::now()));  // a token there is taken at once
  EXPECT_FALSE(limiter.acquireUntil(Clock::now() + milliseconds(20)));
  EXPECT_FALSE(limiter.acquireUntil(Clock::now() - milliseconds(20)));  // already passed
  EXPECT_GT(limiter.waitTime(), std::chrono::seconds(900));  // nothing borrowed meanwhile
}

TEST(RateLimiterTest, AcquireUntilWaitsForATokenBeforeTheDeadline) {
  RateLimiter limiter(50, 1);  // a token every 20 ms
  ASSERT_TRUE(limiter.tryAcquire());
  EXPECT_TRUE(limiter.acquireUntil(Clock::time_point::max()));
}

}  // namespace rate_limiter_test
}  // namespace gpuscale::kube
