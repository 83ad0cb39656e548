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
  // One write as the caller made it.
  struct WriteCall {
    std::string_view verb;  // "create" | "update" | "patch" | "delete"
    const ResourceRef& ref;
    const Object* body;  // the object (create, update) or the patch; null for delete
    PatchType patchType = PatchType::kMerge;
  };
  // `send` makes the call on the inner client. For a delete, an answer that is not an error is
  // success (its object is ignored). The default sends.
  using Send = std::function<core::Result<Object>()>;
  virtual core::Result<Object> write(const WriteCall& call, const Send& send);

  KubeClient& inner() const { return *inner_; }

 private:
  std::shared_ptr<KubeClient> inner_;
};

}  // namespace gpuscale::kube
