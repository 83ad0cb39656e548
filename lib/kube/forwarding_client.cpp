#include "gpuscale/kube/forwarding_client.h"

#include <optional>

namespace gpuscale::kube {
namespace {

core::Status statusOf(const core::Status& status) { return status; }
template <typename T>
core::Status statusOf(const core::Result<T>& result) {
  return result.status();
}

// Runs `call` through `write`: its result when it was sent, else the status that refused it.
template <typename Write, typename Call>
auto through(Write&& write, Call call) -> decltype(call()) {
  std::optional<decltype(call())> result;
  core::Status status = write([&] {
    result = call();
    return statusOf(*result);
  });
  if (!result) return status;
  return std::move(*result);
}

}  // namespace

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
  std::string name = ref.name;
  if (name.empty() && object.contains("metadata") && object["metadata"].is_object()) {
    name = object["metadata"].value("name", "");
  }
  return through([&](const auto& send) { return write("create", ref.named(name), &object, send); },
                 [&] { return inner_->create(ref, object); });
}

core::Result<Object> ForwardingKubeClient::update(const ResourceRef& ref, const Object& object) {
  return through([&](const auto& send) { return write("update", ref, &object, send); },
                 [&] { return inner_->update(ref, object); });
}

core::Result<Object> ForwardingKubeClient::patch(const ResourceRef& ref, PatchType type,
                                                 const Object& patch) {
  return through([&](const auto& send) { return write("patch", ref, &patch, send); },
                 [&] { return inner_->patch(ref, type, patch); });
}

core::Status ForwardingKubeClient::remove(const ResourceRef& ref) {
  return through([&](const auto& send) { return write("delete", ref, nullptr, send); },
                 [&] { return inner_->remove(ref); });
}

core::Result<Object> ForwardingKubeClient::getPath(std::string_view path) {
  return inner_->getPath(path);
}

std::shared_ptr<ClientObserver> ForwardingKubeClient::observer() const {
  return inner_->observer();
}

core::Status ForwardingKubeClient::write(std::string_view, const ResourceRef&, const Object*,
                                         const std::function<core::Status()>& send) {
  return send();
}

void ForwardingClientObserver::requestDone(std::string_view verb, std::string_view resource,
                                           int code, Seconds latency) {
  if (inner_) inner_->requestDone(verb, resource, code, latency);
}

void ForwardingClientObserver::rateLimiterWaited(Seconds wait) {
  if (inner_) inner_->rateLimiterWaited(wait);
}

void ForwardingClientObserver::watchStarted(std::string_view resource) {
  if (inner_) inner_->watchStarted(resource);
}

void ForwardingClientObserver::relistedAfterGone(std::string_view resource) {
  if (inner_) inner_->relistedAfterGone(resource);
}

void ForwardingClientObserver::informerListed(std::string_view resource) {
  if (inner_) inner_->informerListed(resource);
}

}  // namespace gpuscale::kube
