// DeferredKubeClient: a KubeClient whose createAsync() answers only when the test says so, for
// reviews in flight (a TokenReview or SubjectAccessReview that kube-apiserver is slow to answer).
// Everything else, and the answers themselves, come from an inner FakeKubeClient.
//
// Thread safety: thread-safe.
#pragma once

#include <deque>
#include <mutex>

#include <memory>

#include "fakes/fake_kube_client.h"
#include "gpuscale/kube/forwarding_client.h"

namespace gpuscale::testing {

class DeferredKubeClient final : public kube::ForwardingKubeClient {
 public:
  explicit DeferredKubeClient(std::shared_ptr<FakeKubeClient> inner)
      : kube::ForwardingKubeClient(std::move(inner)) {}

  // Reviews sent and not answered yet.
  size_t pending() {
    std::lock_guard lock(mutex_);
    return pending_.size();
  }
  // Answers the oldest pending call with what the inner client says (from this thread); false
  // when none is pending.
  bool answerOne() {
    Call call;
    {
      std::lock_guard lock(mutex_);
      if (pending_.empty()) return false;
      call = std::move(pending_.front());
      pending_.pop_front();
    }
    call.done(inner().create(call.ref, call.object));
    return true;
  }
  void answerAll() {
    while (answerOne()) {
    }
  }

  void createAsync(const kube::ResourceRef& ref, const kube::Object& object,
                   std::function<void(core::Result<kube::Object>)> done) override {
    std::lock_guard lock(mutex_);
    pending_.push_back({ref, object, std::move(done)});
  }

 private:
  struct Call {
    kube::ResourceRef ref;
    kube::Object object;
    std::function<void(core::Result<kube::Object>)> done;
  };
  std::mutex mutex_;
  std::deque<Call> pending_;
};

}  // namespace gpuscale::testing
