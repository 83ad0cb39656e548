#include "gpuscale/adapter/forwarding_external_provider.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <string>

#include "gpuscale/core/metric_families.h"
#include "gpuscale/core/no_wait.h"

namespace gpuscale::adapter {

ForwardingExternalProvider::ForwardingExternalProvider(
    std::shared_ptr<apiserver::ExternalMetricsProvider> local,
    std::shared_ptr<const ExternalMetricsRemote> remote, core::Duration discoveryTtl,
    std::shared_ptr<prometheus::Registry> registry)
    : local_(std::move(local)), remote_(std::move(remote)), discoveryTtl_(discoveryTtl) {
  if (registry) {
    requests_ =
        &core::counterFamily(*registry, "gpuscale_adapter_external_fallback_requests_total",
                             "External-metric requests forwarded to the fallback external-metrics "
                             "server, by the HTTP code of the answer passed on");
    discoveryFailures_ =
        &core::counter(*registry, "gpuscale_adapter_external_fallback_discovery_failures_total",
                       "Failed fetches of the fallback server's discovery list (our "
                       "own list is served until the next success)");
    up_ = &core::gauge(*registry, "gpuscale_adapter_external_fallback_up",
                       "1 when the last fetch of the fallback server's discovery list succeeded");
    remoteMetricCount_ =
        &core::gauge(*registry, "gpuscale_adapter_external_fallback_metrics",
                     "Metrics in the fallback server's last discovery list (merged "
                     "into ours; on a name clash ours win)");
  }
  refresher_ = std::jthread([this](std::stop_token stop) { refreshLoop(stop); });
}

ForwardingExternalProvider::~ForwardingExternalProvider() {
  refresher_.request_stop();
  wake_.notify_all();
}

bool ForwardingExternalProvider::servedLocally(std::string_view metric) const {
  if (!local_) return false;
  for (const apiserver::ExternalMetricInfo& info : local_->listMetrics()) {
    if (info.metric == metric) return true;
  }
  return false;
}

std::vector<apiserver::ExternalMetricInfo> ForwardingExternalProvider::listMetrics() const {
  std::vector<apiserver::ExternalMetricInfo> out;
  if (local_) out = local_->listMetrics();
  std::set<std::string, std::less<>> ours;
  for (const auto& info : out) ours.insert(info.metric);
  std::lock_guard lock(mutex_);
  if (fetchedAt_ && std::chrono::steady_clock::now() - *fetchedAt_ >= discoveryTtl_ &&
      !refreshWanted_) {
    refreshWanted_ = true;
    wake_.notify_all();
  }
  for (const auto& info : remoteMetrics_) {
    if (!ours.contains(info.metric)) out.push_back(info);
  }
  return out;
}

core::Result<std::vector<apiserver::ExternalMetricValue>>
ForwardingExternalProvider::getExternalMetric(std::string_view namespaceName,
                                              std::string_view metric,
                                              const core::LabelSelector& metricSelector) {
  if (!servedLocally(metric)) return apiserver::metricNotFound({"", "namespaces"}, metric);
  return local_->getExternalMetric(namespaceName, metric, metricSelector);
}

core::Result<std::vector<apiserver::ExternalMetricValue>>
ForwardingExternalProvider::getExternalMetricAs(const apiserver::UserInfo& caller,
                                                std::string_view rawLabelSelector,
                                                std::string_view namespaceName,
                                                std::string_view metric,
                                                const core::LabelSelector& metricSelector) {
  if (servedLocally(metric)) {
    return local_->getExternalMetricAs(caller, rawLabelSelector, namespaceName, metric,
                                       metricSelector);
  }
  // A thread that may not wait (core/no_wait.h) does not call the fallback.
  if (!core::mayWait()) return core::wouldBlock();
  auto values = remote_->getExternalMetric(caller, rawLabelSelector, namespaceName, metric);
  if (requests_ != nullptr) {
    requests_->Add({{"code", std::to_string(values ? 200 : values.status().httpCode())}})
        .Increment();
  }
  if (!values) {
    spdlog::debug("external metric {} forwarded to {}: {}", metric, remote_->url(),
                  values.status().toString());
  }
  return values;
}

core::Result<std::shared_ptr<apiserver::ExternalMetricsProvider>> withExternalFallback(
    std::shared_ptr<apiserver::ExternalMetricsProvider> local,
    const ExternalFallbackOptions& fallback, std::shared_ptr<prometheus::Registry> registry) {
  if (!fallback.enabled()) return local;
  auto remote = ExternalMetricsRemote::create(fallback);
  if (!remote) return remote.status();
  spdlog::info(
      "external metrics no rule serves are forwarded to {} (timeout {}, discovery cached {})",
      fallback.url, core::formatGoDuration(fallback.timeout),
      core::formatGoDuration(fallback.discoveryTtl));
  return std::shared_ptr<apiserver::ExternalMetricsProvider>(
      std::make_shared<ForwardingExternalProvider>(std::move(local), std::move(*remote),
                                                   fallback.discoveryTtl, std::move(registry)));
}

void ForwardingExternalProvider::refreshLoop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, stop, [this] { return refreshWanted_; });
      if (stop.stop_requested()) return;
    }
    refreshOnce();
  }
}

void ForwardingExternalProvider::refreshOnce() {
  auto fetched = remote_->listMetrics();
  std::lock_guard lock(mutex_);
  refreshWanted_ = false;
  fetchedAt_ = std::chrono::steady_clock::now();
  const bool wasUp = remoteUp_.value_or(true);
  remoteUp_ = fetched.ok();
  if (up_ != nullptr) up_->Set(fetched.ok() ? 1 : 0);
  if (!fetched) {
    remoteMetrics_.clear();
    if (discoveryFailures_ != nullptr) discoveryFailures_->Increment();
    if (wasUp) {
      spdlog::warn(
          "external metrics fallback {}: discovery failed, serving our own external metrics only "
          "until it answers again: {}",
          remote_->url(), fetched.status().toString());
    }
  } else {
    remoteMetrics_ = std::move(*fetched);
    if (!wasUp)
      spdlog::info("external metrics fallback {}: discovery answers again", remote_->url());
  }
  if (remoteMetricCount_ != nullptr) {
    remoteMetricCount_->Set(static_cast<double>(remoteMetrics_.size()));
  }
}

}  // namespace gpuscale::adapter
