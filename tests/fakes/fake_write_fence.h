// A kube::WriteFence for tests of what a client does with it: open for a while, open and renewed
// at every question (a leader that keeps renewing), or closed. It counts the questions and the
// refusals.
//
// Thread safety: thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>

#include "gpuscale/kube/write_fence.h"

namespace gpuscale::testing {

class FakeWriteFence final : public kube::WriteFence {
 public:
  // Open until now + `d`, then closed.
  void openFor(Clock::duration d) {
    std::lock_guard lock(mu_);
    renewed_ = false;
    until_ = Clock::now() + d;
  }
  // Open at every question, until `d` after it (a leader that keeps renewing).
  void renewedEvery(Clock::duration d) {
    std::lock_guard lock(mu_);
    renewed_ = true;
    every_ = d;
  }
  void close() { openFor(Clock::duration::zero()); }

  core::Result<Clock::time_point> openUntil() override {
    ++asked_;
    std::lock_guard lock(mu_);
    const auto now = Clock::now();
    if (renewed_) return now + every_;
    if (now < until_) return until_;
    ++refused_;
    return core::Status(503, "NotLeader", "fence closed");
  }

  int asked() const { return asked_.load(); }
  int refused() const { return refused_.load(); }

 private:
  std::mutex mu_;
  bool renewed_ = false;
  Clock::duration every_{};
  Clock::time_point until_ = Clock::time_point::max();
  std::atomic<int> asked_{0};
  std::atomic<int> refused_{0};
};

}  // namespace gpuscale::testing
