// ForwardingKubeClient: a KubeClient that hands every call to an inner FakeKubeClient, for test
// doubles that change one behaviour (a list that waits, a review that answers later) and keep the
// fake's semantics for the rest: derive and override the call that differs.
//
// Thread safety: as the inner client.
#pragma once

#include <memory>

#include "fakes/fake_kube_client.h"

namespace gpuscale::testing {

class ForwardingKubeClient : public kube::KubeClient {
 public:
  explicit ForwardingKubeClient(std::shared_ptr<FakeKubeClient> inner = nullptr)
      : inner_(inner ? std::move(inner) : std::make_shared<FakeKubeClient>()) {}

  FakeKubeClient& inner() { return *inner_; }

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
  std::shared_ptr<FakeKubeClient> inner_;
};

}  // namespace gpuscale::testing
