// LeaseFence: the reconciler's write fence (kube/write_fence.h) at the level of each request
// attempt. RestKubeClient asks it before every attempt of a write, after every rate-limiter wait
// and during every wait for a retry; it is open while this replica leads, until its leadership
// would end without another renewal (LeaderElector::leadershipLeft), and closed it answers 503
// NotLeader (isNotLeader, as FencedKubeClient).
//
// Why beside FencedKubeClient: that decorator asks once per call, before the client's rate limiter
// and its retries of 429 answers (up to maxRetries x maxRetryAfter, far longer than leaseDuration -
// renewDeadline). A replica deposed in between would still send the retry. With this fence, no
// attempt starts after the leadership ends, and no wait runs past that moment without asking again:
// the last attempt of a replica starts before its renewDeadline runs out, which is at least
// leaseDuration - renewDeadline before any other replica can take the Lease over.
//
// Use it for the controller's client only, never for the Lease's own (a candidate could never
// acquire it).
//
// Thread safety: thread-safe if `left` is.
#pragma once

#include <chrono>
#include <functional>

#include "gpuscale/kube/write_fence.h"

namespace gpuscale::reconciler {

class LeaseFence final : public kube::WriteFence {
 public:
  // `left`: how long this replica still leads (LeaderElector::leadershipLeft); zero or less: not.
  explicit LeaseFence(std::function<Clock::duration()> left);

  core::Result<Clock::time_point> openUntil() override;

 private:
  std::function<Clock::duration()> left_;
};

}  // namespace gpuscale::reconciler
