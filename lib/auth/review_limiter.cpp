#include "gpuscale/auth/review_limiter.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "gpuscale/core/metric_families.h"

namespace gpuscale::auth {
namespace {

int index(Review review) { return review == Review::kToken ? 0 : 1; }

// Takes one of `limit` places counted by `count`; false when all are taken.
bool take(std::atomic<size_t>& count, size_t limit) {
  size_t now = count.load();
  do {
    if (now >= limit) return false;
  } while (!count.compare_exchange_weak(now, now + 1));
  return true;
}

}  // namespace

core::Status tooManyReviews(std::string_view what) {
  return core::Status(429, "TooManyRequests", std::string(what) + ", please try again later");
}

struct ReviewLimiter::Metrics {
  std::shared_ptr<prometheus::Registry> registry;  // owns the families
  prometheus::Counter* rejections[2][2] = {};      // [review][rate]
  prometheus::Gauge* waiting = nullptr;

  explicit Metrics(std::shared_ptr<prometheus::Registry> shared) : registry(std::move(shared)) {
    auto& family =
        core::counterFamily(*registry, "gpuscale_auth_review_rejections_total",
                            "Requests answered 429 instead of waiting for a TokenReview (token) or "
                            "SubjectAccessReview (subject_access), by reason: rate (reviews per "
                            "second) or waiting (requests already waiting for reviews)");
    const char* reviews[] = {"token", "subject_access"};
    const char* reasons[] = {"waiting", "rate"};
    for (int review = 0; review < 2; ++review) {
      for (int rate = 0; rate < 2; ++rate) {
        rejections[review][rate] =
            &family.Add({{"review", reviews[review]}, {"reason", reasons[rate]}});
      }
    }
    waiting = &core::gauge(*registry, "gpuscale_auth_requests_waiting_for_review",
                           "Requests parked until a TokenReview or SubjectAccessReview answers");
  }
};

ReviewLimiter::ReviewLimiter(ReviewLimits limits,
                             const std::shared_ptr<prometheus::Registry>& registry)
    : limits_(limits),
      reservedPlaces_(static_cast<size_t>(
          std::ceil(static_cast<double>(limits.maxWaiting) * limits.reservedShare))),
      generalRate_(limits.reviewsPerSecond * (1 - limits.reservedShare),
                   std::max(1, static_cast<int>(limits.burst * (1 - limits.reservedShare)))),
      reservedRate_(limits.reviewsPerSecond * limits.reservedShare,
                    std::max(1, static_cast<int>(limits.burst * limits.reservedShare))),
      metrics_(registry ? std::make_unique<Metrics>(registry) : nullptr) {}

ReviewLimiter::~ReviewLimiter() = default;

core::Status ReviewLimiter::refuse(Review review, bool rate) {
  if (metrics_) metrics_->rejections[index(review)][rate ? 1 : 0]->Increment();
  if (!logged_[index(review)][rate ? 1 : 0].exchange(true)) {
    spdlog::warn(
        "{} refused with 429: {}; logged once, gpuscale_auth_review_rejections_total counts them",
        review == Review::kToken ? "a TokenReview" : "a SubjectAccessReview",
        rate ? "more reviews per second than allowed" : "too many requests waiting for reviews");
  }
  return tooManyReviews(rate ? "too many authentication and authorization reviews per second"
                             : "too many requests waiting for authentication or authorization");
}

core::Result<ReviewLimiter::Place> ReviewLimiter::wait(Review review, bool knownGood) {
  bool reserved = false;
  if (knownGood && take(reserved_, reservedPlaces_)) {
    reserved = true;
  } else if (!take(general_, limits_.maxWaiting - std::min(limits_.maxWaiting, reservedPlaces_))) {
    return refuse(review, false);
  }
  if (metrics_) metrics_->waiting->Set(static_cast<double>(waiting()));
  return Place(PlaceRelease{this, reserved});
}

core::Status ReviewLimiter::start(Review review, bool knownGood) {
  if (limits_.reviewsPerSecond <= 0) return {};
  if (knownGood && limits_.reservedShare > 0 && reservedRate_.tryAcquire()) return {};
  if (generalRate_.tryAcquire()) return {};
  return refuse(review, true);
}

void ReviewLimiter::release(bool reserved) {
  (reserved ? reserved_ : general_).fetch_sub(1);
  if (metrics_) metrics_->waiting->Set(static_cast<double>(waiting()));
}

}  // namespace gpuscale::auth
