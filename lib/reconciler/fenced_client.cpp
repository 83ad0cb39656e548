#include "gpuscale/reconciler/fenced_client.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace gpuscale::reconciler {
namespace {

constexpr const char* kNotLeader = "NotLeader";

}  // namespace

FencedKubeClient::FencedKubeClient(std::shared_ptr<kube::KubeClient> inner,
                                   std::function<bool()> mayWrite)
    : ForwardingKubeClient(std::move(inner)), mayWrite_(std::move(mayWrite)) {}

core::Status FencedKubeClient::write(std::string_view verb, const kube::ResourceRef& ref,
                                     const kube::Object*,
                                     const std::function<core::Status()>& send) {
  if (!mayWrite_ || mayWrite_()) return send();
  ++refused_;
  const std::string message = fmt::format("not the leader: {} {} not sent", verb, ref.path());
  spdlog::debug("fenced write: {}", message);
  return core::Status(503, kNotLeader, message);
}

bool isNotLeader(const core::Status& status) {
  return !status.ok() && status.reason() == kNotLeader;
}

}  // namespace gpuscale::reconciler
