// RuleStatus: per-rule and per-metric health of the adapter, for `/metrics` and for explain's
// "last error".
//
// The relister reports each rule's discovery (success with its time, or the failure); the query
// runner reports each query a provider sends for a (rule, metric) pair: success (with how old the
// newest sample served is), an empty result, or a failure with its class. Families (registered on
// the given registry):
//   gpuscale_adapter_rule_last_relist_success_timestamp_seconds{rule}     gauge
//   gpuscale_adapter_rule_discovery_errors_total{rule,class}              counter
//   gpuscale_adapter_metric_queries_total{rule,metric}                    counter (every query)
//   gpuscale_adapter_metric_query_errors_total{rule,metric,class}         counter
//   gpuscale_adapter_metric_empty_results_total{rule,metric}              counter
//   gpuscale_adapter_metric_value_age_seconds{rule,metric}                gauge
// `class` is one of kErrorClasses (a fixed set: "unreachable", "timeout", "bad_response",
// "prometheus_error", "credentials", "other"). The value age is "now" minus the newest sample
// timestamp of the result served: Prometheus stamps instant-query samples with the evaluation
// time, so this is how old the served answer is (cache TTL included), not when an exporter last
// reported.
//
// Cardinality bound: `rule` values are rule paths from the rule file (rules[i], externalRules[i]);
// `metric` values are metric names the rules produced AND a client asked for. At most `maxMetrics`
// distinct (rule, metric) pairs get their own children; later pairs are counted under
// metric="(other)". So the per-metric families hold at most (maxMetrics + rules) × (3 + classes)
// series whatever the series cardinality in Prometheus.
//
// Thread safety: thread-safe; every method may be called from any thread.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "gpuscale/core/status.h"
#include "gpuscale/prom/types.h"

namespace gpuscale::adapter {

inline constexpr std::array<std::string_view, 6> kErrorClasses = {
    "unreachable", "timeout", "bad_response", "prometheus_error", "credentials", "other"};

// The class of a failed Prometheus call (one of kErrorClasses).
std::string_view errorClassOf(const core::Status& error);

// Which rule and metric a provider's query serves.
struct QueryOrigin {
  std::string rule;    // rule path, e.g. "rules[0]"
  std::string metric;  // API metric name
};

// What is remembered about one error.
struct RecordedError {
  std::string message;
  std::string errorClass;
  std::string metric;  // queries only
  std::chrono::system_clock::time_point at;
};

// One rule's state as explain shows it.
struct RuleState {
  std::optional<std::chrono::system_clock::time_point> lastRelistSuccess;
  std::optional<RecordedError> lastDiscoveryError;  // cleared by the next success
  std::optional<RecordedError> lastQueryError;      // kept: the most recent failed query
  uint64_t queries = 0;
  uint64_t queryErrors = 0;
  uint64_t emptyResults = 0;
};

class RuleStatus {
 public:
  static constexpr size_t kDefaultMaxMetrics = 1000;
  static constexpr std::string_view kOverflowMetric = "(other)";

  // `registry` may be null (state is still kept for explain).
  explicit RuleStatus(std::shared_ptr<prometheus::Registry> registry,
                      size_t maxMetrics = kDefaultMaxMetrics);
  ~RuleStatus();
  RuleStatus(const RuleStatus&) = delete;
  RuleStatus& operator=(const RuleStatus&) = delete;

  void discoverySucceeded(std::string_view rule, std::chrono::system_clock::time_point at);
  void discoveryFailed(std::string_view rule, const core::Status& error,
                       std::chrono::system_clock::time_point at);

  // A query answered: counts it, counts an empty result (no sample at all), and sets the value age
  // from the newest sample (vector or scalar).
  void querySucceeded(const QueryOrigin& origin, const prom::QueryResult& result,
                      std::chrono::system_clock::time_point now);
  void queryFailed(const QueryOrigin& origin, const core::Status& error,
                   std::chrono::system_clock::time_point now);

  // The state of `rule` (default-constructed when nothing was reported).
  RuleState state(std::string_view rule) const;

  // Forgets what no longer exists, state and series in /metrics alike: every rule not in `rules`
  // (the rule paths served now) and every (rule, metric) pair not in `metrics` (the pairs the
  // served registries hold; a served rule's (rule, "(other)") pair stays). A rule or pair reported
  // again later starts afresh.
  void retain(const std::set<std::string>& rules,
              const std::set<std::pair<std::string, std::string>>& metrics);

  struct Families;
  struct MetricChildren;

 private:
  MetricChildren* children(const QueryOrigin& origin);  // mutex_ held

  size_t maxMetrics_;
  std::unique_ptr<Families> families_;  // null without a registry
  mutable std::mutex mutex_;
  std::map<std::string, RuleState, std::less<>> rules_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<MetricChildren>> metrics_;
};

}  // namespace gpuscale::adapter
