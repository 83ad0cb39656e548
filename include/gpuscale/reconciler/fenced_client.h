// FencedKubeClient: the one door every write of the reconciler goes out through. It decorates a
// KubeClient and asks a fence (normally LeaderElector::isLeader) right before each create, update,
// patch and remove; a closed fence answers 503 NotLeader without sending anything. Reads and
// watches pass through.
//
// Why here and not only at the start of a pass: a pass can take longer than the renew deadline (a
// slow API server, a long list, Prometheus), and a replica whose lease ran out mid-pass must not
// go on flipping node labels or raising maxReplicas while a successor acts on the same objects.
// Checking at the moment of the write closes that window down to one in-flight request; inside the
// call, the Kubernetes client's own waits (rate limiter, retries of 429s) are fenced per attempt
// by LeaseFence (lease_fence.h). The answer is a plain error value, so callers handle it as any
// other failed write (optimistic_write does not retry it: it is not a 409).
//
// The Lease itself must not go through this client (the fence would keep a candidate from ever
// acquiring it).
//
// Thread safety: thread-safe if the inner client and the fence are.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "gpuscale/kube/client.h"
#include "gpuscale/kube/forwarding_client.h"

namespace gpuscale::reconciler {

class FencedKubeClient final : public kube::ForwardingKubeClient {
 public:
  // `mayWrite` is called before every write; it must be cheap and thread-safe.
  FencedKubeClient(std::shared_ptr<kube::KubeClient> inner, std::function<bool()> mayWrite);

  // Writes refused so far (for tests and logs).
  int refused() const { return refused_.load(); }

 protected:
  core::Result<kube::Object> write(const WriteCall& call, const Send& send) override;

 private:
  std::function<bool()> mayWrite_;
  std::atomic<int> refused_{0};
};

// The error a closed fence answers (503 NotLeader): `what` says what was not sent.
core::Status notLeader(std::string_view what);
// True for the error FencedKubeClient (and LeaseFence) answers when the fence is closed.
bool isNotLeader(const core::Status& status);

}  // namespace gpuscale::reconciler
