// RequestDeadline: the deadline of the request the current thread is serving, so that waits deep
// below the handler (the Kubernetes client's rate limiter, its HTTP round trip, a Retry-After
// pause) end when the server stops waiting for the request, instead of holding the thread for
// their own, longer bounds.
//
// A server sets it for the part of a request that runs on one thread (Scope); code that waits
// reads current() and gives up at that point with a timeout error. Outside a Scope there is no
// deadline.
//
// Thread safety: thread-local, no sharing.
#pragma once

#include <chrono>
#include <optional>

namespace gpuscale::core {

class RequestDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  // Sets this thread's deadline while it lives; the previous one (if any) comes back after. A
  // deadline of Clock::time_point::max() means none.
  class Scope {
   public:
    explicit Scope(Clock::time_point deadline);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::optional<Clock::time_point> previous_;
  };

  // This thread's deadline; nullopt when none is set.
  static std::optional<Clock::time_point> current() noexcept;
};

}  // namespace gpuscale::core
