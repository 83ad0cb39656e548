#include "gpuscale/kube/rate_limiter.h"

#include <gtest/gtest.h>

namespace gpuscale::kube {
namespace {

using Clock = RateLimiter::Clock;
using std::chrono::milliseconds;

TEST(RateLimiterTest, BurstThenQps) {
  RateLimiter limiter(5, 10);
  const auto t0 = Clock::now();
  int granted = 0;
  while (limiter.tryAcquire(t0)) ++granted;
  EXPECT_EQ(granted, 10);
  EXPECT_FALSE(limiter.tryAcquire(t0 + milliseconds(100)));  // 0.5 token
  EXPECT_TRUE(limiter.tryAcquire(t0 + milliseconds(200)));   // 1 token at 5/s
  EXPECT_FALSE(limiter.tryAcquire(t0 + milliseconds(200)));
  EXPECT_GT(limiter.waitTime(t0 + milliseconds(200)), milliseconds(150));
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

}  // namespace
}  // namespace gpuscale::kube
