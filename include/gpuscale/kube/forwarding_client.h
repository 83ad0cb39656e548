// ForwardingKubeClient: a KubeClient that passes every call to another one. Decorators (the
// reconciler's write fence and retry accounting, tests' probes and recorders) derive from it and
// override only what they change: a read (get, list, watch), or write(), which every write passes
// through, so a method added to KubeClient is forwarded in one place. ForwardingClientObserver does
// the same for the ClientObserver seam.
//
// Thread safety: as the wrapped client; write() overrides are called concurrently.
#pragma once

#include <functional>
#include <memory>

#include "gpuscale/kube/client.h"

namespace gpuscale::kube {

class ForwardingKubeClient : public KubeClient {
 public:
  explicit ForwardingKubeClient(std::shared_ptr<KubeClient> inner) : inner_(std::move(inner)) {}

  core::Result<Object> get(const ResourceRef& ref) override;
  core::Result<ObjectList> list(const ResourceRef& ref, const ListOptions& options) override;
  core::Status watch(const ResourceRef& ref, const WatchOptions& options,
                     const WatchHandler& handler, std::stop_token stop) override;
  core::Result<Object> create(const ResourceRef& ref, const Object& object) override;
  core::Result<Object> update(const ResourceRef& ref, const Object& object) override;
  core::Result<Object> patch(const ResourceRef& ref, PatchType type, const Object& patch) override;
  core::Status remove(const ResourceRef& ref) override;
  core::Result<Object> getPath(std::string_view path) override;
  std::shared_ptr<ClientObserver> observer() const override;

 protected:
  // The write `verb` ("create", "update", "patch", "delete") of `body` (the object or the patch;
  // null for a delete) to `ref` (for a create, named after the object's metadata.name). `send`
  // makes the call and returns its status; a decorator may refuse the write by returning an error
  // without calling it. The default just sends.
  virtual core::Status write(std::string_view verb, const ResourceRef& ref, const Object* body,
                             const std::function<core::Status()>& send);

  KubeClient& inner() const { return *inner_; }

 private:
  std::shared_ptr<KubeClient> inner_;
};

// A ClientObserver that passes every report to another one (null: to nobody); decorators override
// the reports they also act on.
class ForwardingClientObserver : public ClientObserver {
 public:
  explicit ForwardingClientObserver(std::shared_ptr<ClientObserver> inner)
      : inner_(std::move(inner)) {}

  void requestDone(std::string_view verb, std::string_view resource, int code,
                   Seconds latency) override;
  void rateLimiterWaited(Seconds wait) override;
  void watchStarted(std::string_view resource) override;
  void relistedAfterGone(std::string_view resource) override;
  void informerListed(std::string_view resource) override;

 private:
  std::shared_ptr<ClientObserver> inner_;
};

}  // namespace gpuscale::kube
