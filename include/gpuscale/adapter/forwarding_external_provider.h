// ForwardingExternalProvider: external.metrics.k8s.io served by our external rules first and by
// another external-metrics API server (ExternalMetricsRemote, e.g. KEDA's metrics server) for every
// metric no rule serves, so both can be installed in one cluster behind one APIService.
//
//  - Discovery (listMetrics): our metrics, then the remote's that we do not serve (ours win on a
//    name clash). The remote list is cached for `discoveryTtl`; when it is older, a background
//    thread fetches it again while the cached one is still served (listMetrics never waits on the
//    remote). A failed fetch degrades to our own list until the next success: logged once per
//    outage, counted in gpuscale_adapter_external_fallback_discovery_failures_total, and
//    gpuscale_adapter_external_fallback_up drops to 0.
//  - Values (getExternalMetricAs): a metric of ours is answered locally; any other is forwarded
//    with the caller's identity and labelSelector (see external_metrics_remote.h), whether or not
//    the remote listed it, and the remote's answer or error Status is passed through. Forwarded
//    requests are counted by HTTP code in gpuscale_adapter_external_fallback_requests_total.
//    getExternalMetric() (no caller) answers our own metrics only.
//
// Thread safety: thread-safe. Owns one refresher thread, stopped and joined by the destructor.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "gpuscale/adapter/external_metrics_remote.h"
#include "gpuscale/apiserver/provider.h"

namespace gpuscale::adapter {

class ForwardingExternalProvider final : public apiserver::ExternalMetricsProvider {
 public:
  // `local` may be null (no external rules: every metric is forwarded). `registry` may be null.
  ForwardingExternalProvider(std::shared_ptr<apiserver::ExternalMetricsProvider> local,
                             std::shared_ptr<const ExternalMetricsRemote> remote,
                             core::Duration discoveryTtl,
                             std::shared_ptr<prometheus::Registry> registry);
  ~ForwardingExternalProvider() override;

  std::vector<apiserver::ExternalMetricInfo> listMetrics() const override;
  core::Result<std::vector<apiserver::ExternalMetricValue>> getExternalMetric(
      std::string_view namespaceName, std::string_view metric,
      const core::LabelSelector& metricSelector) override;
  core::Result<std::vector<apiserver::ExternalMetricValue>> getExternalMetricAs(
      const apiserver::UserInfo& caller, std::string_view rawLabelSelector,
      std::string_view namespaceName, std::string_view metric,
      const core::LabelSelector& metricSelector) override;

 private:
  bool servedLocally(std::string_view metric) const;
  void refreshLoop(std::stop_token stop);
  void refreshOnce();

  std::shared_ptr<apiserver::ExternalMetricsProvider> local_;
  std::shared_ptr<const ExternalMetricsRemote> remote_;
  core::Duration discoveryTtl_;

  mutable std::mutex mutex_;
  mutable std::condition_variable_any wake_;
  mutable bool refreshWanted_ = true;  // the first fetch starts at once
  std::vector<apiserver::ExternalMetricInfo> remoteMetrics_;
  std::optional<std::chrono::steady_clock::time_point> fetchedAt_;
  std::optional<bool> remoteUp_;  // unknown until the first fetch ends

  prometheus::Family<prometheus::Counter>* requests_ = nullptr;
  prometheus::Counter* discoveryFailures_ = nullptr;
  prometheus::Gauge* up_ = nullptr;
  prometheus::Gauge* remoteMetricCount_ = nullptr;
  std::jthread refresher_;  // last: started after every member above exists
};

// The external-metrics provider to serve: `local` (null when there are no external rules) as is
// when `fallback` is off, else wrapped in a ForwardingExternalProvider. Errors name the bad flag.
core::Result<std::shared_ptr<apiserver::ExternalMetricsProvider>> withExternalFallback(
    std::shared_ptr<apiserver::ExternalMetricsProvider> local,
    const ExternalFallbackOptions& fallback, std::shared_ptr<prometheus::Registry> registry);

}  // namespace gpuscale::adapter
