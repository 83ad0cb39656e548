#include "gpuscale/reconciler/retried_writes.h"

#include <fmt/format.h>

#include "ceiling_holder.h"
#include "gpuscale/partition/capacity_request.h"
#include "gpuscale/partition/kube_objects.h"

namespace gpuscale::reconciler {
namespace {

// The write in progress on this thread, while RetryNotingClient waits for it:
// ThrottleNotingObserver adds the 429s the client's retry loop met.
struct WriteInProgress {
  int throttled = 0;
};
thread_local WriteInProgress* tWrite = nullptr;

constexpr const char* kConflict = "WriteConflictRetried";
constexpr const char* kThrottled = "ThrottledRetried";

std::optional<EventTarget> eventTargetOf(const std::string& resource, const std::string& ns,
                                         const std::string& name) {
  if (resource == "nodes") return EventTarget::node(name);
  if (resource == "horizontalpodautoscalers") return EventTarget::hpa(ns, name);
  if (resource == "configmaps") return EventTarget{"ConfigMap", "v1", ns, name, ""};
  if (resource == partition::kCapacityRequestResource) {
    return demandEventTarget(ns, partition::capacityRequestHpaName(name));
  }
  return std::nullopt;
}

std::string messageFor(const std::string& reason, const EventTarget& target) {
  if (reason == kConflict) {
    return fmt::format(
        "a write to this {} met a conflicting write (409 Conflict); gpuscale re-read it and "
        "applied its change to the new version",
        target.kind);
  }
  return fmt::format(
      "kube-apiserver throttled writes to this {} (429 TooManyRequests); gpuscale waited as told "
      "(Retry-After) and sent them again",
      target.kind);
}

}  // namespace

RetriedWrites::RetriedWrites(std::shared_ptr<ReconcilerMetrics> metrics)
    : metrics_(std::move(metrics)) {}

void RetriedWrites::conflict(const kube::ResourceRef& ref, int times) {
  note(ref, kConflict, times);
}

void RetriedWrites::throttled(const kube::ResourceRef& ref, int times) {
  note(ref, kThrottled, times);
}

void RetriedWrites::note(const kube::ResourceRef& ref, const char* reason, int times) {
  if (times <= 0) return;
  if (metrics_) {
    for (int i = 0; i < times; ++i) {
      metrics_->writeRetried(ref.resource, reason == kConflict ? "conflict" : "throttled");
    }
  }
  std::lock_guard lock(mu_);
  pending_[{ref.resource, ref.namespaceName, ref.name, reason}] += times;
}

void RetriedWrites::flush(EventRecorder& events) {
  decltype(pending_) due;
  {
    std::lock_guard lock(mu_);
    due.swap(pending_);
  }
  for (const auto& [key, times] : due) {
    const auto& [resource, ns, name, reason] = key;
    auto target = eventTargetOf(resource, ns, name);
    if (!target) continue;
    if (!events.recordRepeated(*target, true, reason, messageFor(reason, *target), times)) {
      std::lock_guard lock(mu_);
      pending_[key] += times;
    }
  }
}

RetryNotingClient::RetryNotingClient(std::shared_ptr<kube::KubeClient> inner,
                                     std::shared_ptr<RetriedWrites> retried)
    : ForwardingKubeClient(std::move(inner)), retried_(std::move(retried)) {}

core::Result<kube::Object> RetryNotingClient::write(const WriteCall& call, const Send& send) {
  if (call.body == nullptr) return send();  // delete
  kube::ResourceRef ref = call.ref;
  if (ref.name.empty()) ref = ref.named(partition::identityOf(*call.body).name);
  WriteInProgress progress;
  WriteInProgress* outer = tWrite;
  tWrite = &progress;
  auto r = send();
  tWrite = outer;
  // The last 429 was not retried when the client gave up on it.
  const bool gaveUp = !r && k8s::isTooManyRequests(r.status());
  retried_->throttled(ref, progress.throttled - (gaveUp ? 1 : 0));
  if (!r && k8s::isConflict(r.status())) retried_->conflict(ref);
  return r;
}

void ThrottleNotingObserver::requestDone(std::string_view verb, std::string_view resource, int code,
                                         Seconds latency) {
  if (code == 429 && tWrite != nullptr) ++tWrite->throttled;
  KubeClientMetrics::requestDone(verb, resource, code, latency);
}

}  // namespace gpuscale::reconciler
