#include "gpuscale/adapter/resource_discovery.h"

#include <spdlog/spdlog.h>

#include <condition_variable>

#include "gpuscale/core/metric_families.h"

namespace gpuscale::adapter {

ResourceDiscovery::ResourceDiscovery(std::shared_ptr<kube::KubeClient> client,
                                     std::shared_ptr<prometheus::Registry> registry)
    : mapper_(std::move(client), k8s::BuiltinResourceTable::instance().resources()) {
  auto& refreshes =
      core::counterFamily(*registry, "gpuscale_api_discovery_refreshes_total",
                          "Reads of the Kubernetes API discovery documents by result");
  successes_ = &refreshes.Add({{"result", "success"}});
  failures_ = &refreshes.Add({{"result", "failure"}});
  changes_ = &core::counter(*registry, "gpuscale_api_discovery_changes_total",
                            "API discovery refreshes that changed the resources rules can name");
  degradedGauge_ =
      &core::gauge(*registry, "gpuscale_api_discovery_degraded",
                   "1 while API discovery fails and the last good resource table serves");
  resources_ = &core::gauge(*registry, "gpuscale_api_discovery_resources",
                            "Resources the adapter can map rule labels and requests to");
  resources_->Set(static_cast<double>(mapper_.resources().size()));
}

ResourceDiscovery::~ResourceDiscovery() { stop(); }

bool ResourceDiscovery::refreshOnce() {
  std::lock_guard lock(refreshMu_);
  const uint64_t before = mapper_.generation();
  core::Status status = mapper_.refresh();
  if (!status.ok()) {
    failures_->Increment();
    degradedGauge_->Set(1);
    if (!degraded_) {
      spdlog::warn(
          "API discovery failed, keeping the last resource table (logged once until it "
          "recovers): {}",
          status.toString());
    } else {
      spdlog::debug("API discovery failed again: {}", status.toString());
    }
    degraded_ = true;
    return false;
  }
  successes_->Increment();
  degradedGauge_->Set(0);
  if (degraded_) spdlog::info("API discovery recovered");
  degraded_ = false;
  resources_->Set(static_cast<double>(mapper_.resources().size()));
  if (mapper_.generation() == before) return false;
  changes_->Increment();
  return true;
}

void ResourceDiscovery::start(core::Duration interval, std::function<void()> onChange) {
  refresher_ = std::jthread([this, interval, onChange = std::move(onChange)](std::stop_token stop) {
    std::mutex waitMu;
    std::condition_variable_any wake;
    std::unique_lock lock(waitMu);
    while (!wake.wait_for(lock, stop, interval, [] { return false; }) && !stop.stop_requested()) {
      if (refreshOnce() && onChange) onChange();
    }
  });
}

void ResourceDiscovery::stop() {
  refresher_.request_stop();
  if (refresher_.joinable()) refresher_.join();
}

}  // namespace gpuscale::adapter
