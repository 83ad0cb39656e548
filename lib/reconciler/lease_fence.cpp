#include "gpuscale/reconciler/lease_fence.h"

#include "gpuscale/reconciler/fenced_client.h"

namespace gpuscale::reconciler {

LeaseFence::LeaseFence(std::function<Clock::duration()> left) : left_(std::move(left)) {}

core::Result<LeaseFence::Clock::time_point> LeaseFence::openUntil() {
  const auto now = Clock::now();
  const Clock::duration left = left_();
  if (left <= Clock::duration::zero()) return notLeader("write");
  return now + left;
}

}  // namespace gpuscale::reconciler
