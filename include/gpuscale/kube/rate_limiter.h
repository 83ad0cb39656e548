// A token bucket: `qps` tokens per second, at most `burst` saved up. The client takes one token per
// request (client-go's --client-qps/--client-burst behaviour).
//
// Thread safety: all methods are thread-safe. acquire() blocks the caller (never call it from a
// pplx pool thread).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>

namespace gpuscale::kube {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  // qps <= 0 disables limiting.
  RateLimiter(double qps, int burst);

  // Takes a token, waiting as long as needed. Returns false if `stop` was requested first, or at
  // once when the wait for a token would pass `deadline` (as client-go's limiter under a context
  // deadline: no waiting for a token that would come too late).
  bool acquire(std::stop_token stop = {}, std::optional<Clock::time_point> deadline = {});
  // Takes a token if one is available at `now`.
  bool tryAcquire(Clock::time_point now = Clock::now());
  // How long until a token is available at `now` (zero if one is).
  Clock::duration waitTime(Clock::time_point now = Clock::now());

 private:
  void refill(Clock::time_point now);

  const double qps_;
  const double burst_;
  std::mutex mu_;
  std::condition_variable_any cv_;
  double tokens_;
  Clock::time_point last_;
};

}  // namespace gpuscale::kube
