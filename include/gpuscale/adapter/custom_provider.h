// CustomProvider: custom.metrics.k8s.io backed by the rule registry and Prometheus
// (prometheus-adapter's prometheusProvider, with its data-safety gaps closed).
//
// getMetricByName: normalise the resource (ResourceMapper), look the metric up in the current
// registry snapshot (404 "the server could not find the metric M for R" when absent), render the
// rule's PromQL for the one object, run it (QueryRunner: coalesced, cached, failures are 500/503
// "unable to fetch metrics: <cause>"), and pick the sample whose resource label is the object's
// name. No sample, or a value that is not a number (NaN, ±Inf), is 404 "... for R NAME": never a
// made-up 0.
//
// getMetricBySelector: the metric is looked up first (an unknown metric costs no object listing),
// then the ObjectLister says which objects the wildcard covers. No objects: 404 as for an unknown
// metric (prometheus-adapter). All objects, or more than `maxNamesInQuery` names, or a rendered
// query of `maxQueryBytes` or more: one namespace-wide query (resource matcher `label!=""`) whose
// samples are filtered locally by exact name, so the PromQL stays bounded (< 16 KiB) however many
// objects match. Otherwise one query with the names (`pod=~"a|b"`). Objects without data or with
// NaN/±Inf values are left out (counted by QueryRunner::servedValue); the list may be empty (200,
// as prometheus-adapter).
//
// Values: Quantity::fromMetricValue (int64(v*1000) truncated, DecimalSI). NaN and ±Inf are never
// served (a saturated +Inf would drive the HPA to its maximum): the object is missing instead, as
// for external metrics.
// Timestamp: when the response is built (prometheus-adapter's behaviour), RFC3339 seconds on the
// wire. describedObject: the resource's kind, "<group>/<version>" apiVersion ("/v1" for core
// kinds).
//
// Thread safety: thread-safe; calls block on Prometheus (run them on server worker threads).
#pragma once

#include <functional>
#include <memory>

#include "gpuscale/adapter/object_lister.h"
#include "gpuscale/adapter/query_runner.h"
#include "gpuscale/adapter/relister.h"
#include "gpuscale/apiserver/provider.h"
#include "gpuscale/k8s/resource_mapper.h"

namespace gpuscale::adapter {

// The registries the providers read; a function so tests can hand in fixed snapshots.
using SnapshotSource = std::function<std::shared_ptr<const DiscoverySnapshot>()>;

struct CustomProviderOptions {
  size_t maxNamesInQuery = 100;
  size_t maxQueryBytes = 16 * 1024;
};

class CustomProvider final : public apiserver::CustomMetricsProvider {
 public:
  CustomProvider(SnapshotSource snapshots, const k8s::ResourceMapper& mapper,
                 std::shared_ptr<ObjectLister> objects, std::shared_ptr<QueryRunner> runner,
                 CustomProviderOptions options = {});

  std::vector<apiserver::CustomMetricInfo> listMetrics() const override;
  core::Result<apiserver::MetricValue> getMetricByName(
      std::string_view namespaceName, std::string_view name,
      const apiserver::CustomMetricInfo& info, const core::LabelSelector& metricSelector) override;
  core::Result<std::vector<apiserver::MetricValue>> getMetricBySelector(
      std::string_view namespaceName, const core::LabelSelector& objectSelector,
      const apiserver::CustomMetricInfo& info, const core::LabelSelector& metricSelector) override;

  struct Lookup;

 private:
  core::Result<Lookup> lookup(const apiserver::CustomMetricInfo& info) const;

  SnapshotSource snapshots_;
  const k8s::ResourceMapper& mapper_;
  std::shared_ptr<ObjectLister> objects_;
  std::shared_ptr<QueryRunner> runner_;
  CustomProviderOptions options_;
};

}  // namespace gpuscale::adapter
