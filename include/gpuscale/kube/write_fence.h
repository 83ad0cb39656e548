// WriteFence: who may still write through a Kubernetes client, and until when.
//
// A client given a fence (ClientConfig::writeFence) asks it before every attempt of a write
// (create, update, patch, delete): before the first, after every wait for a rate-limiter token and
// after every wait for a retry (429 with Retry-After), right before the request goes out. A closed
// fence ends the write with the fence's Status and nothing is sent. An open fence says until when
// it is open; no wait runs past that moment without asking again, so a retry never outlives the
// right to write it began with. Reads and watches are not fenced.
//
// The reconciler's fence is its Lease (reconciler/lease_fence.h): open while the replica leads,
// until its leadership would end without another renewal, so a replica whose renewals stall sends
// nothing more once that time has come, even from inside a retry loop that began while it led.
//
// Thread safety: implementations must be thread-safe and cheap (asked before every attempt).
#pragma once

#include <chrono>

#include "gpuscale/core/result.h"

namespace gpuscale::kube {

class WriteFence {
 public:
  using Clock = std::chrono::steady_clock;

  virtual ~WriteFence() = default;

  // Open: the moment until which the fence stays open (in the future; Clock::time_point::max()
  // for no end); the caller asks again once it has passed. Closed: the Status the write ends with.
  virtual core::Result<Clock::time_point> openUntil() = 0;
};

}  // namespace gpuscale::kube
