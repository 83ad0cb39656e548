// ReviewLimiter: how much delegated authentication and authorization (TokenReviews and
// SubjectAccessReviews sent to kube-apiserver) the server lets callers cause, so that a flood of
// unknown tokens or paths from anonymous callers costs little and never locks out callers that are
// known good.
//
//  - Rate: reviews are started at most `reviewsPerSecond` per second (burst `burst`). A review
//    beyond that is not waited for: the request is answered 429 TooManyRequests at once
//    (Retry-After: 1), as kube-apiserver answers a client beyond its limits.
//  - Waiting: a request waiting for a review is parked (no handler thread held; see
//    apiserver/pending_request.h), and at most `maxWaiting` requests wait at any time; beyond
//    that, 429 at once. This also bounds the reviews in flight (each has a waiting request).
//  - Known good: a `reservedShare` of both the rate and the waiting places is kept for reviews of
//    identities that passed recently (a token that was valid, a SubjectAccessReview that was
//    allowed; the reviewers say which), so that when such a caller's cache entry expires during a
//    flood of unknown tokens, its review still starts. Unknown callers draw only on the rest;
//    known-good ones take from the reserve first.
// Each refusal is logged once per reason and counted:
//   gpuscale_auth_review_rejections_total{review="token"|"subject_access",reason="rate"|"waiting"}
//   gpuscale_auth_requests_waiting_for_review   gauge
//
// Thread safety: thread-safe.
#pragma once

#include <atomic>
#include <memory>

#include "gpuscale/auth/review_cache_metrics.h"
#include "gpuscale/core/result.h"
#include "gpuscale/core/scoped_release.h"
#include "gpuscale/kube/rate_limiter.h"

namespace prometheus {
class Registry;
}

namespace gpuscale::auth {

struct ReviewLimits {
  // 0: no limit on the rate.
  double reviewsPerSecond = 100;
  int burst = 200;
  size_t maxWaiting = 256;
  double reservedShare = 0.25;
};

class ReviewLimiter {
  // How a Place is given back.
  struct PlaceRelease {
    ReviewLimiter* owner;
    bool reserved;
    void operator()() const { owner->release(reserved); }
  };

 public:
  // A waiting place; released when destroyed.
  using Place = core::ScopedRelease<PlaceRelease>;

  // `registry` may be null (no metrics). The limiter must outlive its Places.
  explicit ReviewLimiter(ReviewLimits limits,
                         const std::shared_ptr<prometheus::Registry>& registry = nullptr);
  ~ReviewLimiter();

  // A place for one request to wait for a review of `review`, or a 429 Status.
  core::Result<Place> wait(Review review, bool knownGood);
  // Leave to start one review now, or a 429 Status.
  core::Status start(Review review, bool knownGood);

  size_t waiting() const { return general_.load() + reserved_.load(); }

 private:
  struct Metrics;
  core::Status refuse(Review review, bool rate);
  void release(bool reserved);

  const ReviewLimits limits_;
  const size_t reservedPlaces_;
  kube::RateLimiter generalRate_;
  kube::RateLimiter reservedRate_;
  std::atomic<size_t> general_{0};
  std::atomic<size_t> reserved_{0};
  std::unique_ptr<Metrics> metrics_;
  std::atomic<bool> logged_[2][2] = {};  // [review][rate]
};

// The 429 a refused request gets: reason TooManyRequests, retry after 1 s.
core::Status tooManyReviews(std::string_view what);

}  // namespace gpuscale::auth
