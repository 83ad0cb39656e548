// ExternalProvider: external.metrics.k8s.io/v1beta1 backed by the external rules and Prometheus
// (prometheus-adapter's externalPrometheusProvider).
//
// listMetrics: one entry per external metric, always `namespaced: true`, as prometheus-adapter
// lists them: the API has only the namespaced path (/namespaces/<ns>/<metric>), and a rule with
// `resources: {namespaced: false}` only makes the query ignore that namespace.
//
// getExternalMetric: look the metric up in the current external registry (unknown: 404 "the server
// could not find the metric M for namespaces"), render the rule's query (metric label selector
// matchers, then the namespace matcher when the rule is namespaced; a rule with `namespaced: false`
// ignores the request's namespace), run it, and turn the result into items: one per vector sample
// (metricLabels = all the sample's labels, timestamp = the sample's), or one for a scalar
// (metricLabels null).
//   - An empty result (no samples, or only NaN/±Inf ones) is 200 with an empty list, as
//     prometheus-adapter answers (the HPA reads it as "no value" and does not scale on it). Why
//     it is empty is logged once per metric and namespace (at info level; later ones at debug)
//     and counted in gpuscale_adapter_external_empty_results_total.
//   - On purpose unlike prometheus-adapter, NaN and ±Inf samples are left out (counted) instead of
//     becoming "-9223372036854775808m": the HPA sums the items' milli-values in int64, so even a
//     saturated value could wrap.
// Matrix and string results are 500 "unable to fetch metrics: unexpected result type".
//
// Thread safety: thread-safe; calls block on Prometheus.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "gpuscale/adapter/custom_provider.h"
#include "gpuscale/adapter/query_runner.h"
#include "gpuscale/apiserver/provider.h"

namespace gpuscale::adapter {

class ExternalProvider final : public apiserver::ExternalMetricsProvider {
 public:
  // `registry` may be null (no counter).
  ExternalProvider(SnapshotSource snapshots, std::shared_ptr<QueryRunner> runner,
                   const std::shared_ptr<prometheus::Registry>& registry = nullptr);

  std::vector<apiserver::ExternalMetricInfo> listMetrics() const override;
  core::Result<std::vector<apiserver::ExternalMetricValue>> getExternalMetric(
      std::string_view namespaceName, std::string_view metric,
      const core::LabelSelector& metricSelector) override;

 private:
  void noteEmpty(std::string_view metric, std::string_view namespaceName, std::string_view cause);

  SnapshotSource snapshots_;
  std::shared_ptr<QueryRunner> runner_;
  prometheus::Counter* emptyResults_ = nullptr;
  std::mutex loggedMu_;
  std::set<std::pair<std::string, std::string>, std::less<>> logged_;  // (metric, namespace)
};

}  // namespace gpuscale::adapter
