// DeferredKubeClient: a KubeClient whose createAsync() answers only when the test says so, for
// reviews in flight (a TokenReview or SubjectAccessReview that kube-apiserver is slow to answer).
// Everything else, and the answers themselves, come from an inner FakeKubeClient.
//
// Thread safety: thread-safe.
#pragma once

#include <deque>
#include <memory>
#include <mutex>

#include "fakes/fake_kube_client.h"

namespace gpuscale::testing {

class DeferredKubeClient final : public kube::KubeClient {
 public:
  explicit DeferredKubeClient(std::shared_ptr<FakeKubeClient> inner = nullptr)
      : inner_(inner ? std::move(inner) : std::make_shared<FakeKubeClient>()) {}

  FakeKubeClient& inner() { return *inner_; }

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
    call.done(inner_->create(call.ref, call.object));
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

  core::Result<kube::Object> get(const kube::ResourceRef& ref) override { return inner_->get(ref); }
  core::Result<kube::ObjectList> list(const kube::ResourceRef& ref,
                                      const kube::ListOptions& options) override {
    return inner_->list(ref, options);
  }
  core::Status watch(const kube::ResourceRef& ref, const kube::WatchOptions& options,
                     const kube::WatchHandler& handler, std::stop_token stop) override {
    return inner_->watch(ref, options, handler, stop);
  }
  core::Result<kube::Object> create(const kube::ResourceRef& ref,
                                    const kube::Object& object) override {
    return inner_->create(ref, object);
  }
  core::Result<kube::Object> update(const kube::ResourceRef& ref,
                                    const kube::Object& object) override {
    return inner_->update(ref, object);
  }
  core::Result<kube::Object> patch(const kube::ResourceRef& ref, kube::PatchType type,
                                   const kube::Object& patch) override {
    return inner_->patch(ref, type, patch);
  }
  core::Status remove(const kube::ResourceRef& ref) override { return inner_->remove(ref); }
  core::Result<kube::Object> getPath(std::string_view path) override {
    return inner_->getPath(path);
  }

 private:
  struct Call {
    kube::ResourceRef ref;
    kube::Object object;
    std::function<void(core::Result<kube::Object>)> done;
  };
  std::shared_ptr<FakeKubeClient> inner_;
  std::mutex mutex_;
  std::deque<Call> pending_;
};

}  // namespace gpuscale::testing
