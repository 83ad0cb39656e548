#include "gpuscale/adapter/rule_status.h"

#include <algorithm>

#include "gpuscale/core/metric_families.h"
#include "gpuscale/prom/errors.h"
#include "metric_children.h"

namespace gpuscale::adapter {
namespace {

using WallClock = std::chrono::system_clock;

std::optional<WallClock::time_point> newestSample(const prom::QueryResult& result) {
  if (result.type == prom::ResultType::kScalar) return result.scalar.timestamp;
  std::optional<WallClock::time_point> newest;
  for (const prom::Sample& sample : result.vector) {
    if (!newest || sample.point.timestamp > *newest) newest = sample.point.timestamp;
  }
  return newest;
}

bool emptyResult(const prom::QueryResult& result) {
  return result.type == prom::ResultType::kVector && result.vector.empty();
}

}  // namespace

std::string_view errorClassOf(const core::Status& error) {
  auto kind = prom::failureKindOf(error);
  if (!kind) return "other";
  switch (*kind) {
    case prom::FailureKind::kConnection:
      return "unreachable";
    case prom::FailureKind::kTimeout:
      return "timeout";
    case prom::FailureKind::kHttpStatus:
    case prom::FailureKind::kBadJson:
    case prom::FailureKind::kBodyTooLarge:
    case prom::FailureKind::kUnexpectedResultType:
      return "bad_response";
    case prom::FailureKind::kPrometheusError:
      return "prometheus_error";
    case prom::FailureKind::kCredentials:
      return "credentials";
  }
  return "other";
}

struct RuleStatus::Families {
  prometheus::Family<prometheus::Gauge>* relistSuccess = nullptr;
  prometheus::Family<prometheus::Counter>* discoveryErrors = nullptr;
  prometheus::Family<prometheus::Counter>* queries = nullptr;
  prometheus::Family<prometheus::Counter>* queryErrors = nullptr;
  prometheus::Family<prometheus::Counter>* emptyResults = nullptr;
  prometheus::Family<prometheus::Gauge>* valueAge = nullptr;

  explicit Families(prometheus::Registry& registry)
      : relistSuccess(&core::gaugeFamily(
            registry, "gpuscale_adapter_rule_last_relist_success_timestamp_seconds",
            "When the rule's seriesQuery last discovered successfully (Unix "
            "time)")),
        discoveryErrors(
            &core::counterFamily(registry, "gpuscale_adapter_rule_discovery_errors_total",
                                 "Failed discoveries of the rule's seriesQuery by error class")),
        queries(&core::counterFamily(
            registry, "gpuscale_adapter_metric_queries_total",
            "Queries sent for a metric (rule, metric); metric=\"(other)\" past the "
            "cardinality bound")),
        queryErrors(&core::counterFamily(registry, "gpuscale_adapter_metric_query_errors_total",
                                         "Failed queries for a metric by error class")),
        emptyResults(&core::counterFamily(
            registry, "gpuscale_adapter_metric_empty_results_total",
            "Queries for a metric that returned no sample (served as missing)")),
        valueAge(&core::gaugeFamily(
            registry, "gpuscale_adapter_metric_value_age_seconds",
            "Age of the newest sample of the last answer served for a metric")) {}
};

// One (rule, metric) pair's children; error counters by class are made on first use.
struct RuleStatus::MetricChildren {
  prometheus::Counter* queries = nullptr;
  prometheus::Counter* empty = nullptr;
  prometheus::Gauge* age = nullptr;
  std::map<std::string, prometheus::Counter*, std::less<>> errors;
  prometheus::Labels labels;
};

RuleStatus::RuleStatus(std::shared_ptr<prometheus::Registry> registry, size_t maxMetrics)
    : maxMetrics_(maxMetrics) {
  if (registry) families_ = std::make_unique<Families>(*registry);
}

RuleStatus::~RuleStatus() = default;

void RuleStatus::discoverySucceeded(std::string_view rule, WallClock::time_point at) {
  std::lock_guard lock(mutex_);
  RuleState& state = rules_[std::string(rule)];
  state.lastRelistSuccess = at;
  state.lastDiscoveryError.reset();
  if (families_)
    families_->relistSuccess->Add({{"rule", std::string(rule)}}).Set(core::unixSeconds(at));
}

void RuleStatus::discoveryFailed(std::string_view rule, const core::Status& error,
                                 WallClock::time_point at) {
  const std::string_view errorClass = errorClassOf(error);
  std::lock_guard lock(mutex_);
  rules_[std::string(rule)].lastDiscoveryError =
      RecordedError{error.message(), std::string(errorClass), "", at};
  if (families_) {
    // Created at once so the rule's success gauge is visible (0) before its first success.
    families_->relistSuccess->Add({{"rule", std::string(rule)}});
    families_->discoveryErrors
        ->Add({{"rule", std::string(rule)}, {"class", std::string(errorClass)}})
        .Increment();
  }
}

RuleStatus::MetricChildren* RuleStatus::children(const QueryOrigin& origin) {
  if (!families_) return nullptr;
  std::pair<std::string, std::string> key{origin.rule, origin.metric};
  auto it = metrics_.find(key);
  if (it == metrics_.end()) {
    if (metrics_.size() >= maxMetrics_) key.second = std::string(kOverflowMetric);
    it = metrics_.find(key);
  }
  if (it != metrics_.end()) return it->second.get();
  auto made = std::make_unique<MetricChildren>();
  made->labels = {{"rule", key.first}, {"metric", key.second}};
  made->queries = &families_->queries->Add(made->labels);
  made->empty = &families_->emptyResults->Add(made->labels);
  made->age = &families_->valueAge->Add(made->labels);
  return metrics_.emplace(std::move(key), std::move(made)).first->second.get();
}

void RuleStatus::querySucceeded(const QueryOrigin& origin, const prom::QueryResult& result,
                                WallClock::time_point now) {
  const bool empty = emptyResult(result);
  const std::optional<WallClock::time_point> newest = newestSample(result);
  std::lock_guard lock(mutex_);
  RuleState& state = rules_[origin.rule];
  ++state.queries;
  if (empty) ++state.emptyResults;
  MetricChildren* metric = children(origin);
  if (metric == nullptr) return;
  metric->queries->Increment();
  if (empty) metric->empty->Increment();
  if (newest) {
    metric->age->Set(std::max(0.0, std::chrono::duration<double>(now - *newest).count()));
  }
}

void RuleStatus::queryFailed(const QueryOrigin& origin, const core::Status& error,
                             WallClock::time_point now) {
  const std::string errorClass(errorClassOf(error));
  std::lock_guard lock(mutex_);
  RuleState& state = rules_[origin.rule];
  ++state.queries;
  ++state.queryErrors;
  state.lastQueryError = RecordedError{error.message(), errorClass, origin.metric, now};
  MetricChildren* metric = children(origin);
  if (metric == nullptr) return;
  metric->queries->Increment();
  auto it = metric->errors.find(errorClass);
  if (it == metric->errors.end()) {
    prometheus::Labels labels = metric->labels;
    labels["class"] = errorClass;
    it = metric->errors.emplace(errorClass, &families_->queryErrors->Add(labels)).first;
  }
  it->second->Increment();
}

void RuleStatus::retain(const std::set<std::string>& rules,
                        const std::set<std::pair<std::string, std::string>>& metrics) {
  std::lock_guard lock(mutex_);
  std::erase_if(rules_, [&](const auto& entry) { return !rules.contains(entry.first); });
  for (auto it = metrics_.begin(); it != metrics_.end();) {
    const auto& [rule, metric] = it->first;
    const bool live =
        rules.contains(rule) && (metric == kOverflowMetric || metrics.contains(it->first));
    if (live) {
      ++it;
      continue;
    }
    if (families_) {
      MetricChildren& children = *it->second;
      families_->queries->Remove(children.queries);
      families_->emptyResults->Remove(children.empty);
      families_->valueAge->Remove(children.age);
      for (auto& [errorClass, counter] : children.errors) families_->queryErrors->Remove(counter);
    }
    it = metrics_.erase(it);
  }
  if (!families_) return;
  auto staleRule = [&](const prometheus::Labels& labels) {
    auto it = labels.find("rule");
    return it != labels.end() && !rules.contains(it->second);
  };
  removeChildrenWhere(*families_->relistSuccess, staleRule);
  removeChildrenWhere(*families_->discoveryErrors, staleRule);
}

RuleState RuleStatus::state(std::string_view rule) const {
  std::lock_guard lock(mutex_);
  auto it = rules_.find(rule);
  return it == rules_.end() ? RuleState{} : it->second;
}

}  // namespace gpuscale::adapter
