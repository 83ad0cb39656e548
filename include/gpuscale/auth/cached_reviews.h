// CachedReviews<V>: the answers of one kind of delegated review (TokenReview, SubjectAccessReview)
// by key, and the rules for asking kube-apiserver again, shared by TokenReviewer and
// DelegatingAuthorizer.
//
//  - Two bounded caches: answers that let the caller in ("passed": a valid token, an allowed
//    request) and answers that do not (an invalid token, a denial), each with its own TTL and size.
//    A flood of unknown tokens or paths churns only the second, so it never evicts the identities
//    of callers that are known good. Errors (kube-apiserver down, a timeout, a malformed answer)
//    are not cached: the next request asks again.
//  - Coalescing: a request for a key already under review waits for that review instead of
//    sending another.
//  - Limits (ReviewLimiter, optional): a request that has to wait takes a waiting place, a new
//    review needs leave to start; either refusal is the request's answer (429). Keys that passed
//    within `knownGoodFor` are known good and draw on the limiter's reserve.
//  - Waiting never holds the caller's thread: `done` runs at once from a cache, or later on the
//    thread that completes the review (see apiserver/pending_request.h for getting back onto a
//    handler thread). get() never blocks.
//
// Thread safety: thread-safe. Reviews in flight keep the shared state alive after the object is
// destroyed.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuscale/auth/review_cache_metrics.h"
#include "gpuscale/auth/review_limiter.h"
#include "gpuscale/auth/ttl_cache.h"
#include "gpuscale/core/result.h"

namespace gpuscale::auth {

struct CachedReviewOptions {
  Review review = Review::kToken;
  std::chrono::milliseconds passedTtl{10'000};
  std::chrono::milliseconds failedTtl{10'000};
  size_t passedEntries = 4096;
  size_t failedEntries = 4096;
  std::chrono::milliseconds knownGoodFor{10 * 60'000};
  // Both may be null (no limits, no metrics).
  std::shared_ptr<ReviewLimiter> limiter;
  std::shared_ptr<ReviewCacheMetrics> metrics;
  CacheClock clock = std::chrono::steady_clock::now;
};

template <typename V>
class CachedReviews {
 public:
  using Answer = core::Result<V>;
  using Done = std::function<void(Answer)>;
  // Sends one review and calls its argument once with the answer, from any thread.
  using Send = std::function<void(Done)>;

  // `passed(answer)` tells the two caches apart.
  CachedReviews(CachedReviewOptions options, std::function<bool(const V&)> passed)
      : state_(std::make_shared<State>(std::move(options), std::move(passed))) {}

  void get(const std::string& key, const Send& send, Done done) {
    State& s = *state_;
    auto cached = s.passed.get(key);
    if (!cached) cached = s.failed.get(key);
    if (s.options.metrics) s.options.metrics->lookup(s.options.review, cached.has_value());
    if (cached) return done(std::move(*cached));

    const bool knownGood = s.knownGood.get(key).has_value();
    ReviewLimiter::Place place;
    if (s.options.limiter) {
      auto waiting = s.options.limiter->wait(s.options.review, knownGood);
      if (!waiting) return done(waiting.status());
      place = std::move(*waiting);
    }
    core::Status refused;
    {
      std::lock_guard lock(s.mutex);
      auto flight = s.inFlight.find(key);
      if (flight != s.inFlight.end()) {
        flight->second.push_back({std::move(done), std::move(place)});
        return;
      }
      if (s.options.limiter) refused = s.options.limiter->start(s.options.review, knownGood);
      if (refused.ok()) s.inFlight[key].push_back({std::move(done), std::move(place)});
    }
    if (!refused.ok()) return done(std::move(refused));  // outside the lock: `done` may do work
    send([state = state_, key](Answer answer) { state->complete(key, std::move(answer)); });
  }

  size_t cachedPassed() const { return state_->passed.size(); }
  size_t cachedFailed() const { return state_->failed.size(); }

 private:
  struct Waiter {
    Done done;
    ReviewLimiter::Place place;  // released once `done` has run
  };
  struct State {
    State(CachedReviewOptions o, std::function<bool(const V&)> p)
        : options(std::move(o)),
          isPassed(std::move(p)),
          passed(options.passedEntries, options.clock),
          failed(options.failedEntries, options.clock),
          knownGood(options.passedEntries, options.clock) {}

    void complete(const std::string& key, Answer answer) {
      if (answer.ok()) {
        if (isPassed(*answer)) {
          passed.put(key, *answer, options.passedTtl);
          knownGood.put(key, true, options.knownGoodFor);
        } else {
          failed.put(key, *answer, options.failedTtl);
        }
      }
      std::vector<Waiter> waiters;
      {
        std::lock_guard lock(mutex);
        auto flight = inFlight.find(key);
        if (flight == inFlight.end()) return;
        waiters = std::move(flight->second);
        inFlight.erase(flight);
      }
      for (auto& waiter : waiters) waiter.done(answer);
    }

    const CachedReviewOptions options;
    const std::function<bool(const V&)> isPassed;
    TtlCache<V> passed;
    TtlCache<V> failed;
    TtlCache<bool> knownGood;
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<Waiter>> inFlight;
  };
  std::shared_ptr<State> state_;
};

// Waits for an asynchronous answer: `start(done)` calls `done` once, from any thread. For the
// synchronous forms of the reviewers.
template <typename T, typename Start>
T waitFor(Start&& start) {
  auto promise = std::make_shared<std::promise<T>>();
  auto answer = promise->get_future();
  start([promise](T value) { promise->set_value(std::move(value)); });
  return answer.get();
}

}  // namespace gpuscale::auth
