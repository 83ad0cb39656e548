// StandaloneObjectLister: object resolution without a Kubernetes API (`--standalone`, the demo,
// tests).
//
//  - No labelSelector: every object Prometheus has data for (ObjectSet::everything(); the provider
//    queries namespace-wide and takes each sample's resource label).
//  - pods and namespaces with a labelSelector: the selector is evaluated against
//  kube-state-metrics'
//    `kube_pod_labels{namespace="<ns>"}` / `kube_namespace_labels` series, whose `label_<key>`
//    labels carry the objects' labels with the key sanitised as kube-state-metrics does (every
//    character outside [a-zA-Z0-9_] becomes '_': `app.kubernetes.io/name` →
//    `label_app_kubernetes_io_name`). The objects are the matching series' `pod` / `namespace`
//    values, sorted. Without those series nothing matches (and the request is a 404, as an empty
//    LIST is in prometheus-adapter).
//  - any other resource with a labelSelector: 400 naming the resource and what standalone mode can
//    evaluate.
// Queries go through the QueryRunner (cached and coalesced like metric queries).
//
// Thread safety: thread-safe.
#pragma once

#include <memory>
#include <string>

#include "gpuscale/adapter/object_lister.h"
#include "gpuscale/adapter/query_runner.h"

namespace gpuscale::adapter {

class StandaloneObjectLister final : public ObjectLister {
 public:
  explicit StandaloneObjectLister(std::shared_ptr<QueryRunner> runner);

  core::Result<ObjectSet> list(const k8s::ResourceInfo& resource, std::string_view namespaceName,
                               const core::LabelSelector& selector) override;

 private:
  std::shared_ptr<QueryRunner> runner_;
};

// kube-state-metrics' label name for a Kubernetes label key: "label_" + key with every character
// outside [a-zA-Z0-9_] replaced by '_'.
std::string kubeStateMetricsLabelName(std::string_view key);

}  // namespace gpuscale::adapter
