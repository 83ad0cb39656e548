#include "gpuscale/kube/forwarding_client.h"

namespace gpuscale::kube {

ForwardingKubeClient::ForwardingKubeClient(std::shared_ptr<KubeClient> inner)
    : inner_(std::move(inner)) {}

core::Result<Object> ForwardingKubeClient::get(const ResourceRef& ref) { return inner_->get(ref); }

core::Result<ObjectList> ForwardingKubeClient::list(const ResourceRef& ref,
                                                    const ListOptions& options) {
  return inner_->list(ref, options);
}

core::Status ForwardingKubeClient::watch(const ResourceRef& ref, const WatchOptions& options,
                                         const WatchHandler& handler, std::stop_token stop) {
  return inner_->watch(ref, options, handler, stop);
}

core::Result<Object> ForwardingKubeClient::create(const ResourceRef& ref, const Object& object) {
  return write({"create", ref, &object}, [&] { return inner_->create(ref, object); });
}

core::Result<Object> ForwardingKubeClient::update(const ResourceRef& ref, const Object& object) {
  return write({"update", ref, &object}, [&] { return inner_->update(ref, object); });
}

core::Result<Object> ForwardingKubeClient::patch(const ResourceRef& ref, PatchType type,
                                                 const Object& patch) {
  return write({"patch", ref, &patch, type}, [&] { return inner_->patch(ref, type, patch); });
}

core::Status ForwardingKubeClient::remove(const ResourceRef& ref) {
  auto r = write({"delete", ref, nullptr}, [&]() -> core::Result<Object> {
    if (auto s = inner_->remove(ref); !s.ok()) return s;
    return Object{};
  });
  return r.ok() ? core::Status() : r.status();
}

core::Result<Object> ForwardingKubeClient::getPath(std::string_view path) {
  return inner_->getPath(path);
}

std::shared_ptr<ClientObserver> ForwardingKubeClient::observer() const {
  return inner_->observer();
}

core::Result<Object> ForwardingKubeClient::write(const WriteCall&, const Send& send) {
  return send();
}

}  // namespace gpuscale::kube
