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

core::Result<kube::Object> FencedKubeClient::write(const WriteCall& call, const Send& send) {
  if (!mayWrite_ || mayWrite_()) return send();
  ++refused_;
  auto refusal = notLeader(fmt::format("{} {}", call.verb, call.ref.path()));
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
