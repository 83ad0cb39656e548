// KubeClientMetrics: the Prometheus implementation of ClientObserver, registered by the adapter
// and the reconciler in the registry their /metrics serves. Families (labels are bounded, see
// client_observer.h):
//   gpuscale_kube_client_requests_total{verb,resource,code}        code: 2xx|3xx|4xx|5xx|error
//   gpuscale_kube_client_request_duration_seconds{verb}            histogram
//   gpuscale_kube_client_rate_limiter_wait_seconds                 histogram
//   gpuscale_kube_client_watch_starts_total{resource}              informer watches (re)opened
//   gpuscale_kube_client_watch_relists_after_gone_total{resource}  410 Gone -> fresh LIST
//   gpuscale_kube_informer_lists_total{resource}                   complete LISTs applied
//   gpuscale_kube_informer_last_sync_timestamp_seconds{resource}   Unix time of the last one
//
// A subclass may act on the reports too (calling these).
//
// Thread safety: thread-safe (prometheus-cpp families lock internally).
#pragma once

#include <memory>

#include "gpuscale/kube/client_observer.h"

namespace prometheus {
class Registry;
}

namespace gpuscale::kube {

class KubeClientMetrics : public ClientObserver {
 public:
  explicit KubeClientMetrics(std::shared_ptr<prometheus::Registry> registry);
  ~KubeClientMetrics() override;

  void requestDone(std::string_view verb, std::string_view resource, int code,
                   Seconds latency) override;
  void rateLimiterWaited(Seconds wait) override;
  void watchStarted(std::string_view resource) override;
  void relistedAfterGone(std::string_view resource) override;
  void informerListed(std::string_view resource) override;

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> families_;
};

}  // namespace gpuscale::kube
