// In-memory CustomMetricsProvider and ExternalMetricsProvider for handler tests, the integration
// fixture server and the load benchmark. Values are set up front; errors and delays can be injected
// per metric. Behaviour follows the provider contract in include/gpuscale/apiserver/provider.h:
// unknown metric -> 404, a named object without a value -> 404, a wildcard with no matching object
// -> 404, matching objects without values are left out. Timestamps are the fixed `timestamp` member
// so outputs can be compared byte for byte.
//
// Thread safety: set up before use; the provider calls are thread-safe.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gpuscale/apiserver/provider.h"
#include "gpuscale/core/no_wait.h"

namespace gpuscale::testing {

// What both fakes share: the metrics they list (each once, in the order added), the failures
// injected per metric name, and the fixed timestamp of their values.
template <typename Info>
class FakeMetricsBase {
 public:
  apiserver::Timestamp timestamp{std::chrono::seconds(1714557600)};  // 2024-05-01T10:00:00Z

  // Every later call for `metric` answers `status`.
  void failMetric(const std::string& metric, core::Status status) {
    std::lock_guard lock(mutex_);
    failures_.insert_or_assign(metric, std::move(status));
  }

 protected:
  // Requires mutex_ (as do the other *Locked members).
  void addMetricLocked(const Info& info) {
    if (!listedLocked(info)) metrics_.push_back(info);
  }
  bool listedLocked(const Info& info) const {
    return std::find(metrics_.begin(), metrics_.end(), info) != metrics_.end();
  }
  // The failure injected for `metric`, or null.
  const core::Status* failureLocked(std::string_view metric) const {
    auto it = failures_.find(metric);
    return it == failures_.end() ? nullptr : &it->second;
  }

  mutable std::mutex mutex_;
  std::vector<Info> metrics_;

 private:
  std::map<std::string, core::Status, std::less<>> failures_;
};

class FakeCustomMetricsProvider final : public apiserver::CustomMetricsProvider,
                                        public FakeMetricsBase<apiserver::CustomMetricInfo> {
 public:
  struct Entry {
    apiserver::CustomMetricInfo info;
    apiserver::ObjectReference object;  // kind, namespace, name, apiVersion
    core::Labels labels;                // the object's labels (for labelSelector)
    core::Quantity value;
  };

  // Registers a metric without values (listed by discovery).
  void addMetric(const apiserver::CustomMetricInfo& info) {
    std::lock_guard lock(mutex_);
    addMetricLocked(info);
  }
  // Registers the metric (if needed) and an object's value.
  void addValue(Entry entry) {
    std::lock_guard lock(mutex_);
    addMetricLocked(entry.info);
    entries_.push_back(std::move(entry));
  }
  void delayMetric(const std::string& metric, std::chrono::milliseconds delay) {
    std::lock_guard lock(mutex_);
    delays_.insert_or_assign(metric, delay);
  }

  std::vector<apiserver::CustomMetricInfo> listMetrics() const override {
    std::lock_guard lock(mutex_);
    return metrics_;
  }

  core::Result<apiserver::MetricValue> getMetricByName(
      std::string_view namespaceName, std::string_view name,
      const apiserver::CustomMetricInfo& info, const core::LabelSelector& metricSelector) override {
    if (auto status = prepare(info); !status.ok()) return status;
    std::lock_guard lock(mutex_);
    for (const auto& entry : entries_) {
      if (entry.info == info && entry.object.namespaceName == namespaceName &&
          entry.object.name == name) {
        return valueOf(entry, metricSelector);
      }
    }
    return apiserver::objectMetricNotFound(info.resource, info.metric, name);
  }

  core::Result<std::vector<apiserver::MetricValue>> getMetricBySelector(
      std::string_view namespaceName, const core::LabelSelector& objectSelector,
      const apiserver::CustomMetricInfo& info, const core::LabelSelector& metricSelector) override {
    if (auto status = prepare(info); !status.ok()) return status;
    std::lock_guard lock(mutex_);
    std::vector<apiserver::MetricValue> values;
    for (const auto& entry : entries_) {
      if (entry.info == info && entry.object.namespaceName == namespaceName &&
          objectSelector.matches(entry.labels)) {
        values.push_back(valueOf(entry, metricSelector));
      }
    }
    if (values.empty()) return apiserver::metricNotFound(info.resource, info.metric);
    return values;
  }

 private:
  // Unknown metric, injected failure or delay.
  core::Status prepare(const apiserver::CustomMetricInfo& info) {
    std::chrono::milliseconds delay{0};
    {
      std::lock_guard lock(mutex_);
      if (!listedLocked(info)) return apiserver::metricNotFound(info.resource, info.metric);
      if (const core::Status* failure = failureLocked(info.metric)) return *failure;
      if (auto it = delays_.find(info.metric); it != delays_.end()) delay = it->second;
    }
    if (delay.count() > 0) {
      // A delayed metric waits, as a query to Prometheus does (core/no_wait.h).
      if (!core::mayWait()) return core::wouldBlock();
      std::this_thread::sleep_for(delay);
    }
    return {};
  }

  apiserver::MetricValue valueOf(const Entry& entry,
                                 const core::LabelSelector& metricSelector) const {
    apiserver::MetricValue value;
    value.describedObject = entry.object;
    value.metricName = entry.info.metric;
    value.timestamp = timestamp;
    value.value = entry.value;
    if (!metricSelector.empty()) value.selector = metricSelector;
    return value;
  }

  std::vector<Entry> entries_;
  std::map<std::string, std::chrono::milliseconds, std::less<>> delays_;
};

class FakeExternalMetricsProvider final : public apiserver::ExternalMetricsProvider,
                                          public FakeMetricsBase<apiserver::ExternalMetricInfo> {
 public:
  struct Sample {
    std::string metric;
    std::string namespaceName;
    std::optional<std::map<std::string, std::string>> labels;  // nullopt: a scalar result
    core::Quantity value;
  };

  void addMetric(const std::string& metric) {
    std::lock_guard lock(mutex_);
    addMetricLocked({metric});
  }
  void addSample(Sample sample) {
    std::lock_guard lock(mutex_);
    addMetricLocked({sample.metric});
    samples_.push_back(std::move(sample));
  }

  std::vector<apiserver::ExternalMetricInfo> listMetrics() const override {
    std::lock_guard lock(mutex_);
    return metrics_;
  }

  core::Result<std::vector<apiserver::ExternalMetricValue>> getExternalMetric(
      std::string_view namespaceName, std::string_view metric,
      const core::LabelSelector& metricSelector) override {
    std::lock_guard lock(mutex_);
    if (const core::Status* failure = failureLocked(metric)) return *failure;
    if (!listedLocked({std::string(metric)})) {
      return apiserver::metricNotFound({"", "namespaces"}, metric);
    }
    std::vector<apiserver::ExternalMetricValue> values;
    for (const auto& sample : samples_) {
      if (sample.metric != metric || sample.namespaceName != namespaceName) continue;
      core::Labels labels;
      if (sample.labels) labels.insert(sample.labels->begin(), sample.labels->end());
      if (!metricSelector.matches(labels)) continue;
      values.push_back({sample.metric, sample.labels, timestamp, std::nullopt, sample.value});
    }
    return values;
  }

 private:
  std::vector<Sample> samples_;
};

}  // namespace gpuscale::testing
