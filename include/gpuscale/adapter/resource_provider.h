// ResourceProvider: metrics.k8s.io/v1beta1 (PodMetrics, NodeMetrics) from the rule file's
// `resourceRules`, as prometheus-adapter serves it, with metrics-server's answers where the two
// differ (resource_metrics_assembly.h: incomplete pods are left out, nanocores).
//
// Pods: the ObjectLister (the one the custom provider uses) says which pods a request covers.
// Kubernetes-backed, only Running pods count (metrics-server and prometheus-adapter list Running
// pods only) and their labels are reported; the pods are grouped by namespace and each namespace
// costs one cpu and one memory containerQuery (.GroupBy "<pod label>,<containerLabel>", the pods'
// names as matcher, or `pod!=""` filtered locally beyond `maxNamesInQuery` names). Standalone
// (every object Prometheus has data for), a list of every namespace is one query pair without a
// namespace matcher, grouped by the namespace label as well. A named pod that is not listed is 404
// `pods "x" not found`; one without complete data 404 podmetrics.
// Nodes: the same with nodeQuery (.GroupBy the node label), one query pair per request.
//
// Failures are errors, never partial lists: a failed listing or Prometheus call (QueryRunner:
// 500/503 "unable to fetch metrics: ..."), a rule that cannot render its query (500 "unable to
// build the query: ..."), and a rule file without resourceRules after a reload (503). Queries go to
// the default backend. `window` is resourceRules.window; timestamps come from the samples. NaN and
// ±Inf samples (which leave their object out) are counted with api="resource" in
// gpuscale_adapter_nan_values_total / gpuscale_adapter_infinite_values_total.
//
// Thread safety: thread-safe; calls block on the lister and Prometheus (server worker threads).
#pragma once

#include <functional>
#include <memory>

#include "gpuscale/adapter/object_lister.h"
#include "gpuscale/adapter/query_runner.h"
#include "gpuscale/apiserver/resource_metrics.h"
#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter {

// The rules in force (a function so reloads are followed and tests can hand in fixed rules).
using RuleSetSource = std::function<std::shared_ptr<const rules::RuleSet>()>;

struct ResourceProviderOptions {
  size_t maxNamesInQuery = 100;
};

class ResourceProvider final : public apiserver::ResourceMetricsProvider {
 public:
  ResourceProvider(RuleSetSource rules, const k8s::ResourceMapper& mapper,
                   std::shared_ptr<ObjectLister> objects, std::shared_ptr<QueryRunner> runner,
                   ResourceProviderOptions options = {});

  core::Result<std::vector<apiserver::PodMetrics>> listPodMetrics(
      std::string_view namespaceName, const core::LabelSelector& selector) override;
  core::Result<apiserver::PodMetrics> getPodMetrics(std::string_view namespaceName,
                                                    std::string_view name) override;
  core::Result<std::vector<apiserver::NodeMetrics>> listNodeMetrics(
      const core::LabelSelector& selector) override;
  core::Result<apiserver::NodeMetrics> getNodeMetrics(std::string_view name) override;

 private:
  struct Rules {
    std::shared_ptr<const rules::RuleSet> set;  // keeps `resource` alive
    const rules::CompiledResourceRules* resource = nullptr;
  };
  core::Result<Rules> currentRules() const;
  core::Result<ObjectSet> listObjects(std::string_view resource, std::string_view namespaceName,
                                      const core::LabelSelector& selector) const;
  // The pods of one namespace ("" with `names` null: every namespace) with data; `names` null:
  // every pod Prometheus has data for.
  core::Result<std::vector<apiserver::PodMetrics>> queryPods(
      const Rules& rules, std::string_view namespaceName,
      const std::vector<std::string>* names) const;
  core::Result<std::vector<apiserver::NodeMetrics>> queryNodes(
      const Rules& rules, const std::vector<std::string>* names) const;

  RuleSetSource rules_;
  const k8s::ResourceMapper& mapper_;
  std::shared_ptr<ObjectLister> objects_;
  std::shared_ptr<QueryRunner> runner_;
  ResourceProviderOptions options_;
};

}  // namespace gpuscale::adapter
