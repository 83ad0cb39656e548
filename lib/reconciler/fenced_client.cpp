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
  auto refusal = notLeader(fmt::format("{} {}", verb, ref.path()));
  spdlog::debug("fenced write: {}", refusal.message());
  return refusal;
}

core::Status notLeader(std::string_view what) {
  return core::Status(503, kNotLeader, fmt::format("not the leader: {} not sent", what));
}

bool isNotLeader(const core::Status& status) {
  return !status.ok() && status.reason() == kNotLeader;
}

}  // namespace gpuscale::reconciler
