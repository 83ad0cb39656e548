// CachedObjectLister: in-cluster object resolution from watch caches instead of a LIST per request.
//
// prometheus-adapter LISTs the objects of every wildcard or selector request from kube-apiserver
// (KubeObjectLister does the same); at a thousand pods that LIST and its decoding are nearly all
// of a request's cost, and the client's rate limit (--client-qps) caps the request rate. This
// lister keeps one informer (kube/informer.h) per resource instead, started the first time a
// request names the resource (so only resources the rules serve are watched), across all
// namespaces, and answers from its store's namespace and label indexes.
//
//  - What is kept: metadata-only lists and watches (PartialObjectMetadata) for every resource but
//    pods, whose phase the resource metrics API needs (pods are watched in full); either way only
//    name, namespace, labels, resourceVersion, deletionTimestamp and, for pods, status.phase are
//    stored (cachedFieldsOf), so memory follows the object count, not the objects' size.
//  - Until a resource's cache has synced, requests for it are answered by a direct LIST through
//    `fallback` (counted; logged once per resource). A cache that never syncs (no list/watch
//    permission) keeps falling back and its informer keeps retrying with back-off.
//  - Answers are those of KubeObjectLister: live objects only, sorted by namespace then name. The
//    answer to a (namespace, selector) is kept until the resource's cache changes (at most 1,024
//    per resource), so a repeated HPA request copies it instead of building it again.
//
// /metrics: gpuscale_adapter_object_lookups_total{resource,source} with source "cache" or
// "apiserver" (a fallback LIST).
//
// Thread safety: thread-safe; list() never blocks on a cache (it falls back instead).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "gpuscale/adapter/kube_object_lister.h"
#include "gpuscale/adapter/object_lister.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/kube/informer.h"

namespace prometheus {
class Counter;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace gpuscale::adapter {

class CachedObjectLister final : public ObjectLister {
 public:
  // `registry` may be null (no metrics). The informers use `client`; so does the fallback LIST.
  CachedObjectLister(std::shared_ptr<kube::KubeClient> client,
                     std::shared_ptr<prometheus::Registry> registry);
  ~CachedObjectLister() override;

  core::Result<ObjectSet> list(const k8s::ResourceInfo& resource, std::string_view namespaceName,
                               const core::LabelSelector& selector) override;
  // Copies only the names of the kept answer.
  core::Result<ObjectSet> listNames(const k8s::ResourceInfo& resource,
                                    std::string_view namespaceName,
                                    const core::LabelSelector& selector) override;

  // Starts the cache of `resource` now if it has none (list() does so on first use).
  void watch(const k8s::ResourceInfo& resource);
  // True once the cache of `resource` holds a complete LIST.
  bool synced(const k8s::ResourceInfo& resource) const;

 private:
  struct Cache;
  std::shared_ptr<Cache> cacheFor(const k8s::ResourceInfo& resource);
  // The answer from the cache, or from a LIST while it syncs.
  core::Result<std::shared_ptr<const ObjectSet>> answer(const k8s::ResourceInfo& resource,
                                                        std::string_view namespaceName,
                                                        const core::LabelSelector& selector);
  void count(Cache& cache, bool fromCache);

  std::shared_ptr<kube::KubeClient> client_;
  KubeObjectLister fallback_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* lookups_ = nullptr;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Cache>, std::less<>> caches_;  // "group/version/resource"
};

// What the cache keeps of `object` (a full object or PartialObjectMetadata): apiVersion, kind,
// metadata {name, namespace, labels, resourceVersion, deletionTimestamp} and, when `keepPhase`,
// status.phase. Everything else (spec, annotations, managedFields, ...) is dropped.
kube::Object cachedFieldsOf(kube::Object object, bool keepPhase);

}  // namespace gpuscale::adapter
