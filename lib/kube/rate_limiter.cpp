#include "gpuscale/kube/rate_limiter.h"

#include <algorithm>

namespace gpuscale::kube {

RateLimiter::RateLimiter(double qps, int burst)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)), last_(Clock::now()) {}

void RateLimiter::refill(Clock::time_point now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

bool RateLimiter::tryAcquire(Clock::time_point now) {
  if (qps_ <= 0) return true;
  std::lock_guard lock(mu_);
  refill(now);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

RateLimiter::Clock::duration RateLimiter::waitTime(Clock::time_point now) {
  if (qps_ <= 0) return Clock::duration::zero();
  std::lock_guard lock(mu_);
  refill(now);
  if (tokens_ >= 1) return Clock::duration::zero();
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>((1 - tokens_) / qps_));
}

bool RateLimiter::acquireUntil(Clock::time_point until, std::stop_token stop, Late late) {
  if (qps_ <= 0) return true;
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    const auto now = Clock::now();
    refill(now);
    if (tokens_ >= 1) {
      tokens_ -= 1;
      return true;
    }
    if (now >= until) return false;
    // Waiting callers reserve nothing: whoever wakes first after the refill takes the token.
    const auto wait = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>((1 - tokens_) / qps_));
    if (late == Late::kGiveUp && until - now < wait) return false;
    cv_.wait_until(lock, stop, until - now > wait ? now + wait : until, [] { return false; });
  }
  return false;
}

}  // namespace gpuscale::kube
