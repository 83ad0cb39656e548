#include "gpuscale/auth/cached_reviews.h"

#include <gtest/gtest.h>

#include <deque>

namespace gpuscale::auth {
namespace cached_reviews_test {

using Answer = core::Result<bool>;
using Done = std::function<void(Answer)>;

// Reviews that answer when the test says so; "yes..." keys pass, "no..." keys fail, "error..."
// keys cannot be reviewed.
struct Reviews {
  std::deque<std::pair<std::string, Done>> inFlight;
  int sent = 0;

  CachedReviews<bool>::Send sender(const std::string& key) {
    return [this, key](Done done) {
      ++sent;
      inFlight.emplace_back(key, std::move(done));
    };
  }
  void answerAll() {
    while (!inFlight.empty()) {
      auto [key, done] = std::move(inFlight.front());
      inFlight.pop_front();
      if (key.rfind("error", 0) == 0) {
        done(core::Status::unavailable("down"));
      } else {
        done(key.rfind("yes", 0) == 0);
      }
    }
  }
};

struct Fixture {
  std::chrono::steady_clock::time_point now{std::chrono::hours(1)};
  Reviews reviews;
  CachedReviews<bool> cache;
  std::vector<Answer> answers;

  explicit Fixture(CachedReviewOptions options = {})
      : cache(withClock(std::move(options)), [](const bool& passed) { return passed; }) {}

  CachedReviewOptions withClock(CachedReviewOptions options) {
    options.clock = [this] { return now; };
    return options;
  }
  void get(const std::string& key) {
    cache.get(key, reviews.sender(key), [this](Answer answer) { answers.push_back(answer); });
  }
};

TEST(CachedReviewsTest, ConcurrentRequestsForOneKeyShareOneReview) {
  Fixture f;
  for (int i = 0; i < 3; ++i) f.get("yes-a");
  EXPECT_EQ(f.reviews.sent, 1);
  EXPECT_TRUE(f.answers.empty());  // nobody is answered before the review is
  f.reviews.answerAll();
  ASSERT_EQ(f.answers.size(), 3u);
  for (const auto& answer : f.answers) EXPECT_TRUE(answer.ok() && *answer);
  f.get("yes-a");  // cached now: answered at once
  EXPECT_EQ(f.answers.size(), 4u);
  EXPECT_EQ(f.reviews.sent, 1);
}

TEST(CachedReviewsTest, FailedAnswersNeverPushOutPassedOnesAndErrorsAreNotKept) {
  CachedReviewOptions options;
  options.passedEntries = 2;
  options.failedEntries = 2;
  Fixture f(options);
  f.get("yes-valid");
  f.reviews.answerAll();
  for (int i = 0; i < 50; ++i) {
    f.get("no-junk-" + std::to_string(i));
    f.reviews.answerAll();
  }
  EXPECT_EQ(f.cache.cachedPassed(), 1u);
  EXPECT_EQ(f.cache.cachedFailed(), 2u);
  const int sent = f.reviews.sent;
  f.get("yes-valid");
  f.get("no-junk-49");  // the most recent invalid answers are remembered
  EXPECT_EQ(f.reviews.sent, sent);
  f.get("error-1");
  f.reviews.answerAll();
  f.get("error-1");
  f.reviews.answerAll();
  EXPECT_EQ(f.reviews.sent, sent + 2);
  EXPECT_FALSE(f.answers.back().ok());
}

TEST(CachedReviewsTest, BeyondTheLimiterRequestsGet429AndKnownGoodKeysUseTheReserve) {
  CachedReviewOptions options;
  options.passedTtl = std::chrono::seconds(10);
  // Four waiting places: three for anyone, one reserved; no rate limit.
  options.limiter = std::make_shared<ReviewLimiter>(ReviewLimits{0, 1, 4, 0.25});
  Fixture f(options);
  f.get("yes-known");
  f.reviews.answerAll();
  f.now += std::chrono::seconds(11);  // its answer expired; it stays known good

  for (int i = 0; i < 3; ++i) f.get("no-slow-" + std::to_string(i));
  f.get("no-slow-3");
  ASSERT_EQ(f.answers.size(), 2u);
  ASSERT_FALSE(f.answers.back().ok());
  EXPECT_EQ(f.answers.back().status().httpCode(), 429);
  f.get("yes-known");  // the reserve: its review starts
  EXPECT_EQ(f.reviews.inFlight.size(), 4u);
  f.reviews.answerAll();
  EXPECT_EQ(f.answers.size(), 6u);
  EXPECT_EQ(options.limiter->waiting(), 0u);  // places come back when the reviews answer
}

}  // namespace cached_reviews_test
}  // namespace gpuscale::auth
