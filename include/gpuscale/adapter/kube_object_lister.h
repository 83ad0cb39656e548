// KubeObjectLister: object resolution through the Kubernetes API, as prometheus-adapter does it:
// a wildcard request (`pods/*?labelSelector=...`) becomes one LIST of that resource in that
// namespace with the selector, and the provider queries Prometheus for exactly those names.
//
//  - The objects that exist are the answer, so a pod Prometheus still has stale series for is not
//    reported, and a pod without data is left out by the provider (never a made-up 0).
//  - A LIST that fails is an error value naming the cause (the API layer sends it as is).
//  - The LIST reads the API server's cache (resourceVersion "0"), as client-go listers do.
//
// Thread safety: thread-safe (the KubeClient is).
#pragma once

#include <memory>
#include <optional>

#include "gpuscale/adapter/object_lister.h"
#include "gpuscale/kube/client.h"

namespace gpuscale::adapter {

class KubeObjectLister final : public ObjectLister {
 public:
  explicit KubeObjectLister(std::shared_ptr<kube::KubeClient> client);

  core::Result<ObjectSet> list(const k8s::ResourceInfo& resource, std::string_view namespaceName,
                               const core::LabelSelector& selector) override;

 private:
  std::shared_ptr<kube::KubeClient> client_;
};

// What a lister keeps of one API object (full or PartialObjectMetadata): nullopt for an object
// without a name or with a deletionTimestamp (terminating objects are on their way out; the HPA
// counts only live pods too).
std::optional<ListedObject> listedObjectOf(const kube::Object& item);
// The set of `objects`, sorted by namespace, then name.
ObjectSet objectSetOf(std::vector<ListedObject> objects);

}  // namespace gpuscale::adapter
