#include "gpuscale/auth/review_limiter.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace gpuscale::auth {
namespace review_limiter_test {

std::string exposition(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

TEST(ReviewLimiterTest, WaitingPlacesAreBoundedAndTheReserveIsForKnownGoodCallers) {
  auto registry = std::make_shared<prometheus::Registry>();
  // 8 places: 6 for anyone, 2 kept for known-good callers. No rate limit.
  ReviewLimiter limiter({0, 1, 8, 0.25}, registry);
  std::vector<ReviewLimiter::Place> places;
  for (int i = 0; i < 6; ++i) {
    auto place = limiter.wait(Review::kToken, false);
    ASSERT_TRUE(place.ok()) << i;
    places.push_back(std::move(*place));
  }
  auto refused = limiter.wait(Review::kToken, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().httpCode(), 429);
  EXPECT_EQ(refused.status().reason(), "TooManyRequests");
  // Known good: the reserve, then (when that is taken too) nothing.
  for (int i = 0; i < 2; ++i) {
    auto place = limiter.wait(Review::kSubjectAccess, true);
    ASSERT_TRUE(place.ok()) << i;
    places.push_back(std::move(*place));
  }
  EXPECT_FALSE(limiter.wait(Review::kSubjectAccess, true).ok());
  EXPECT_EQ(limiter.waiting(), 8u);
  places.erase(places.begin());  // a place comes back when its request stops waiting
  EXPECT_TRUE(limiter.wait(Review::kToken, false).ok());

  const auto text = exposition(*registry);
  EXPECT_NE(
      text.find(R"(gpuscale_auth_review_rejections_total{reason="waiting",review="token"} 1)"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          R"(gpuscale_auth_review_rejections_total{reason="waiting",review="subject_access"} 1)"),
      std::string::npos)
      << text;
}

TEST(ReviewLimiterTest, ReviewsBeyondTheRateAreRefusedAtOnceButKnownGoodOnesHaveAReserve) {
  auto registry = std::make_shared<prometheus::Registry>();
  // A slow rate, so that nothing refills during the test: burst 8, of it 6 for anyone, 2 reserved.
  ReviewLimiter limiter({0.001, 8, 100, 0.25}, registry);
  int started = 0;
  while (limiter.start(Review::kToken, false).ok()) ++started;
  EXPECT_EQ(started, 6);
  const auto refused = limiter.start(Review::kToken, false);
  EXPECT_EQ(refused.httpCode(), 429);
  EXPECT_TRUE(limiter.start(Review::kToken, true).ok());
  EXPECT_TRUE(limiter.start(Review::kToken, true).ok());
  EXPECT_FALSE(limiter.start(Review::kToken, true).ok());
  const auto text = exposition(*registry);
  EXPECT_NE(text.find(R"(gpuscale_auth_review_rejections_total{reason="rate",review="token"} 3)"),
            std::string::npos)
      << text;
}

TEST(ReviewLimiterTest, ZeroRateMeansNoRateLimit) {
  ReviewLimiter limiter({0, 1, 10, 0.25});
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.start(Review::kToken, false).ok());
}

}  // namespace review_limiter_test
}  // namespace gpuscale::auth
