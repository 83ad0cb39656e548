// Writes the reconciler retried, as Events on the object each write concerned, so a fault that the
// reconciler rode out still ends with an Event that says what happened:
//   WriteConflictRetried  a write carrying the read resourceVersion got 409 Conflict (someone else
//                         wrote first); it was re-read and the change recomputed
//                         (optimistic_write.h);
//   ThrottledRetried      kube-apiserver answered 429 TooManyRequests; the Kubernetes client waited
//                         as told (Retry-After) and sent the write again.
// Occurrences are counted per (object, reason) as they happen (and at once in /metrics,
// gpuscale_reconciler_write_retries_total{resource,reason}) and flushed once per reconcile pass as
// one Event each, carrying the count; KubeEventRecorder folds later flushes into the same Event
// (its count grows), so a storm of 429s is one Event with a count, not hundreds. An Event that
// cannot be written (kube-apiserver down) is tried again at the next flush.
//
// RetryNotingClient decorates the reconciler's KubeClient: its writes (create, update, patch) note
// 409 answers and the 429s answered in between. The 429s are retried inside RestKubeClient, which
// reports every exchange to its ClientObserver on the requesting thread (client_observer.h):
// ThrottleNotingObserver, installed as that observer (the client's metrics, kube/client_metrics.h,
// plus this), counts them for the write in progress on its thread. Reads, watches and writes of
// other clients (Events, the Lease) are not noted.
//
// Thread safety: all classes are thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "gpuscale/kube/client_metrics.h"
#include "gpuscale/kube/forwarding_client.h"
#include "gpuscale/reconciler/event_recorder.h"
#include "gpuscale/reconciler/reconciler_metrics.h"

namespace gpuscale::reconciler {

class RetriedWrites {
 public:
  explicit RetriedWrites(std::shared_ptr<ReconcilerMetrics> metrics = nullptr);

  // `times` occurrences of a retried 409 / 429 on a write to `ref` (a named object).
  void conflict(const kube::ResourceRef& ref, int times = 1);
  void throttled(const kube::ResourceRef& ref, int times = 1);
  // Records one Event per (object, reason) noted since the last flush, with its count; what could
  // not be recorded stays for the next flush.
  void flush(EventRecorder& events);

 private:
  void note(const kube::ResourceRef& ref, const char* reason, int times);

  std::shared_ptr<ReconcilerMetrics> metrics_;
  std::mutex mu_;
  // (resource, namespace, name, reason) -> occurrences since the last flush
  std::map<std::tuple<std::string, std::string, std::string, std::string>, int> pending_;
};

class RetryNotingClient final : public kube::ForwardingKubeClient {
 public:
  RetryNotingClient(std::shared_ptr<kube::KubeClient> inner,
                    std::shared_ptr<RetriedWrites> retried);

 protected:
  // Notes the retries of a create, update or patch; a delete is sent as is.
  core::Result<kube::Object> write(const WriteCall& call, const Send& send) override;

 private:
  std::shared_ptr<RetriedWrites> retried_;
};

class ThrottleNotingObserver final : public kube::KubeClientMetrics {
 public:
  using KubeClientMetrics::KubeClientMetrics;

  void requestDone(std::string_view verb, std::string_view resource, int code,
                   Seconds latency) override;
};

}  // namespace gpuscale::reconciler
