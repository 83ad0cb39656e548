// ForwardingKubeClient: the base of KubeClient decorators. Every call goes to the inner client;
// every write (create, update, patch, remove) first passes through one hook, write(), which a
// decorator overrides to refuse, withhold or note writes without restating the whole interface.
// Reads, watches and getPath() go straight through (a decorator may still override them).
//
// Thread safety: as thread-safe as the inner client and the subclass's write().
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "gpuscale/kube/client.h"

namespace gpuscale::kube {

class ForwardingKubeClient : public KubeClient {
 public:
  explicit ForwardingKubeClient(std::shared_ptr<KubeClient> inner);

  core::Result<Object> get(const ResourceRef& ref) override;
  core::Result<ObjectList> list(const ResourceRef& ref, const ListOptions& options) override;
  core::Status watch(const ResourceRef& ref, const WatchOptions& options,
                     const WatchHandler& handler, std::stop_token stop) override;
  core::Result<Object> create(const ResourceRef& ref, const Object& object) final;
  core::Result<Object> update(const ResourceRef& ref, const Object& object) final;
  core::Result<Object> patch(const ResourceRef& ref, PatchType type, const Object& patch) final;
  core::Status remove(const ResourceRef& ref) final;
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

}  // namespace gpuscale::kube
