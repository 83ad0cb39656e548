// A token bucket: `qps` tokens per second, at most `burst` saved up. The client takes one token per
// request (client-go's --client-qps/--client-burst behaviour).
//
// Thread safety: all methods are thread-safe. acquire() blocks the caller (never call it from a
// pplx pool thread).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace gpuscale::kube {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  // qps <= 0 disables limiting.
  RateLimiter(double qps, int burst);

  // What acquireUntil() does when the next token would come only after `until`.
  enum class Late {
    kWait,    // waits until `until`, then gives up (a caller that asks again then, like a fenced
              // write whose fence says until when it stays open)
    kGiveUp,  // gives up at once (as client-go's limiter under a context deadline: no waiting for
              // a token that would come too late, e.g. for a request whose deadline it passes)
  };

  // Takes a token, waiting as long as needed. Returns false only if `stop` was requested first.
  bool acquire(std::stop_token stop = {}) {
    return acquireUntil(Clock::time_point::max(), std::move(stop));
  }
  // Takes a token, waiting at most until `until` (see Late). Returns false, without a token, when
  // `until` passes (or, with Late::kGiveUp, would pass) or `stop` is requested first.
  bool acquireUntil(Clock::time_point until, std::stop_token stop = {}, Late late = Late::kWait);
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
