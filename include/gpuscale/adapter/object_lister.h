// ObjectLister: the seam through which the custom-metrics provider learns which objects a wildcard
// request (`pods/*`, `namespaces/*`) covers. prometheus-adapter LISTs them from kube-apiserver on
// every request; gpuscale has two implementations behind this interface:
//   - standalone (no Kubernetes API): the objects are whatever Prometheus has data for, and label
//     selectors are evaluated against kube-state-metrics' label series
//     (standalone_object_lister.h);
//   - Kubernetes-backed (informer caches; comes with the kube module) returns explicit names.
//
// Contracts: list() may block (it may ask Prometheus or the API server) and runs on a server worker
// thread. Errors are Status values the API layer can send as they are (400 for a selector the
// lister cannot evaluate, 500/503 naming the cause when a backend fails).
//
// Thread safety: implementations must be safe to call from many threads at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/result.h"
#include "gpuscale/k8s/resource_mapper.h"

namespace gpuscale::adapter {

// What a lister that reads the objects themselves (Kubernetes-backed) knows of one: the resource
// metrics API reports pods' namespaces and labels and serves Running pods only.
struct ListedObject {
  std::string namespaceName;
  std::string name;
  core::Labels labels;
  std::string phase;  // pods' status.phase ("" for other resources)
};

// The objects a wildcard covers.
struct ObjectSet {
  // Every object Prometheus has data for (the provider queries namespace-wide and takes each
  // sample's resource label). `names` is empty then.
  bool all = false;
  // Otherwise exactly these objects, in the order responses list them.
  std::vector<std::string> names;
  // One per name, same order, when the lister read the objects (empty otherwise). A list of every
  // namespace is sorted by namespace, then name.
  std::vector<ListedObject> objects;

  static ObjectSet everything() { return ObjectSet{true, {}, {}}; }
};

class ObjectLister {
 public:
  virtual ~ObjectLister() = default;

  // The objects of `resource` in `namespaceName` ("" for root-scoped resources, or every namespace)
  // that match `selector`.
  virtual core::Result<ObjectSet> list(const k8s::ResourceInfo& resource,
                                       std::string_view namespaceName,
                                       const core::LabelSelector& selector) = 0;

  // list()'s answer without ObjectSet::objects, for callers that need only names (the custom
  // metrics provider); an implementation may answer it more cheaply. The default calls list().
  virtual core::Result<ObjectSet> listNames(const k8s::ResourceInfo& resource,
                                            std::string_view namespaceName,
                                            const core::LabelSelector& selector) {
    auto set = list(resource, namespaceName, selector);
    if (set) set->objects.clear();
    return set;
  }
};

}  // namespace gpuscale::adapter
