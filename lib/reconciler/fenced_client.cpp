#include "gpuscale/reconciler/fenced_client.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace gpuscale::reconciler {
namespace {

constexpr const char* kNotLeader = "NotLeader";

}  // namespace

FencedKubeClient::FencedKubeClient(std::shared_ptr<kube::KubeClient> inner,
                                   std::function<bool()> mayWrite)
    : inner_(std::move(inner)), mayWrite_(std::move(mayWrite)) {}

core::Status FencedKubeClient::fence(std::string_view verb, const kube::ResourceRef& ref) {
  if (!mayWrite_ || mayWrite_()) return {};
  ++refused_;
  auto refusal = notLeader(fmt::format("{} {}", verb, ref.path()));
  spdlog::debug("fenced write: {}", refusal.message());
  return refusal;
}

core::Result<kube::Object> FencedKubeClient::get(const kube::ResourceRef& ref) {
  return inner_->get(ref);
}

core::Result<kube::ObjectList> FencedKubeClient::list(const kube::ResourceRef& ref,
                                                      const kube::ListOptions& options) {
  return inner_->list(ref, options);
}

core::Status FencedKubeClient::watch(const kube::ResourceRef& ref,
                                     const kube::WatchOptions& options,
                                     const kube::WatchHandler& handler, std::stop_token stop) {
  return inner_->watch(ref, options, handler, stop);
}

core::Result<kube::Object> FencedKubeClient::create(const kube::ResourceRef& ref,
                                                    const kube::Object& object) {
  if (auto s = fence("create", ref); !s.ok()) return s;
  return inner_->create(ref, object);
}

core::Result<kube::Object> FencedKubeClient::update(const kube::ResourceRef& ref,
                                                    const kube::Object& object) {
  if (auto s = fence("update", ref); !s.ok()) return s;
  return inner_->update(ref, object);
}

core::Result<kube::Object> FencedKubeClient::patch(const kube::ResourceRef& ref,
                                                   kube::PatchType type,
                                                   const kube::Object& patch) {
  if (auto s = fence("patch", ref); !s.ok()) return s;
  return inner_->patch(ref, type, patch);
}

core::Status FencedKubeClient::remove(const kube::ResourceRef& ref) {
  if (auto s = fence("delete", ref); !s.ok()) return s;
  return inner_->remove(ref);
}

core::Result<kube::Object> FencedKubeClient::getPath(std::string_view path) {
  return inner_->getPath(path);
}

std::shared_ptr<kube::ClientObserver> FencedKubeClient::observer() const {
  return inner_->observer();
}

core::Status notLeader(std::string_view what) {
  return core::Status(503, kNotLeader, fmt::format("not the leader: {} not sent", what));
}

bool isNotLeader(const core::Status& status) {
  return !status.ok() && status.reason() == kNotLeader;
}

}  // namespace gpuscale::reconciler
