// ExternalProvider: external.metrics.k8s.io/v1beta1 backed by the external rules and Prometheus
// (prometheus-adapter's externalPrometheusProvider).
//
// listMetrics: one entry per external metric, `namespaced: false` for metrics of rules with
// `resources: {namespaced: false}` (prometheus-adapter lists them all as namespaced).
//
// getExternalMetric: look the metric up in the current external registry (unknown: 404 "the server
// could not find the metric M for namespaces"), render the rule's query (metric label selector
// matchers, then the namespace matcher when the rule is namespaced; a rule with `namespaced: false`
// ignores the request's namespace), run it, and turn the result into items: one per vector sample
// (metricLabels = all the sample's labels, timestamp = the sample's), or one for a scalar
// (metricLabels null). Differences from prometheus-adapter, on purpose:
//   - an empty result (no samples, or only NaN/±Inf ones) is 404 "... Prometheus has no data for
//     it" instead of an empty 200 list; the HPA treats both as "metric missing" (never as 0), but
//     a 404 says why;
//   - NaN and ±Inf samples are left out (counted) instead of becoming "-9223372036854775808m":
//     the HPA sums the items' milli-values in int64, so even a saturated value could wrap.
// Matrix and string results are 500 "unable to fetch metrics: unexpected result type".
//
// Thread safety: thread-safe; calls block on Prometheus.
#pragma once

#include <memory>

#include "gpuscale/adapter/custom_provider.h"
#include "gpuscale/adapter/query_runner.h"
#include "gpuscale/apiserver/provider.h"

namespace gpuscale::adapter {

class ExternalProvider final : public apiserver::ExternalMetricsProvider {
 public:
  ExternalProvider(SnapshotSource snapshots, std::shared_ptr<QueryRunner> runner);

  std::vector<apiserver::ExternalMetricInfo> listMetrics() const override;
  core::Result<std::vector<apiserver::ExternalMetricValue>> getExternalMetric(
      std::string_view namespaceName, std::string_view metric,
      const core::LabelSelector& metricSelector) override;

 private:
  SnapshotSource snapshots_;
  std::shared_ptr<QueryRunner> runner_;
};

}  // namespace gpuscale::adapter
