#include "gpuscale/adapter/cached_object_lister.h"

#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <unordered_map>

#include "gpuscale/core/metric_families.h"

namespace gpuscale::adapter {
namespace {

// Distinct (namespace, selector) answers kept per resource; HPAs ask a handful each.
constexpr size_t kMaxAnswersPerResource = 1024;

bool isPods(const k8s::ResourceInfo& resource) {
  return resource.groupResource.group.empty() && resource.groupResource.resource == "pods";
}

std::string cacheKey(const k8s::ResourceInfo& resource) {
  return resource.groupResource.group + "/" + resource.version + "/" +
         resource.groupResource.resource;
}

void copyField(const kube::Object& from, kube::Object& to, const char* key) {
  if (const auto it = from.find(key); it != from.end()) to[key] = *it;
}

}  // namespace

struct CachedObjectLister::Cache {
  std::string label;  // the resource, for metrics and logs
  std::unique_ptr<kube::Informer> informer;
  std::atomic<bool> loggedFallback{false};
  prometheus::Counter* fromCache = nullptr;
  prometheus::Counter* fromApiServer = nullptr;

  // Answers already built, by namespace and selector, valid while the store's generation stays:
  // HPAs repeat the same request, and building a thousand objects' answer costs far more than
  // copying it.
  struct Answer {
    uint64_t generation = 0;
    std::shared_ptr<const ObjectSet> set;
  };
  std::mutex answersMu;
  std::unordered_map<std::string, Answer> answers;
};

kube::Object cachedFieldsOf(kube::Object object, bool keepPhase) {
  kube::Object out = kube::Object::object();
  copyField(object, out, "apiVersion");
  copyField(object, out, "kind");
  kube::Object metadata = kube::Object::object();
  if (const auto it = object.find("metadata"); it != object.end() && it->is_object()) {
    for (const char* key :
         {"name", "namespace", "labels", "resourceVersion", "deletionTimestamp"}) {
      copyField(*it, metadata, key);
    }
  }
  out["metadata"] = std::move(metadata);
  if (keepPhase) {
    if (const auto status = object.find("status"); status != object.end() && status->is_object()) {
      kube::Object kept = kube::Object::object();
      copyField(*status, kept, "phase");
      out["status"] = std::move(kept);
    }
  }
  return out;
}

CachedObjectLister::CachedObjectLister(std::shared_ptr<kube::KubeClient> client,
                                       std::shared_ptr<prometheus::Registry> registry)
    : client_(client), fallback_(std::move(client)), registry_(std::move(registry)) {
  if (registry_) {
    lookups_ = &core::counterFamily(
        *registry_, "gpuscale_adapter_object_lookups_total",
        "Objects looked up for wildcard and selector requests, by resource and "
        "source: cache (watch cache) or apiserver (a LIST while the cache "
        "syncs).");
  }
}

CachedObjectLister::~CachedObjectLister() {
  std::lock_guard lock(mu_);
  for (auto& [key, cache] : caches_) cache->informer->stop();
}

std::shared_ptr<CachedObjectLister::Cache> CachedObjectLister::cacheFor(
    const k8s::ResourceInfo& resource) {
  const std::string key = cacheKey(resource);
  std::lock_guard lock(mu_);
  if (auto it = caches_.find(key); it != caches_.end()) return it->second;
  auto cache = std::make_shared<Cache>();
  cache->label = resource.groupResource.resource +
                 (resource.groupResource.group.empty() ? "" : "." + resource.groupResource.group);
  kube::InformerOptions options;
  options.resource = kube::ResourceRef::collection(resource.groupResource.group, resource.version,
                                                   resource.groupResource.resource);
  const bool pods = isPods(resource);
  options.metadataOnly = !pods;
  options.transform = [pods](kube::Object object) {
    return cachedFieldsOf(std::move(object), pods);
  };
  cache->informer = std::make_unique<kube::Informer>(client_, std::move(options));
  if (lookups_ != nullptr) {
    cache->fromCache = &lookups_->Add({{"resource", cache->label}, {"source", "cache"}});
    cache->fromApiServer = &lookups_->Add({{"resource", cache->label}, {"source", "apiserver"}});
  }
  spdlog::info("object cache: watching {} ({})", cache->label,
               pods ? "pods: metadata and phase" : "metadata only");
  cache->informer->start();
  caches_.emplace(key, cache);
  return cache;
}

void CachedObjectLister::watch(const k8s::ResourceInfo& resource) { (void)cacheFor(resource); }

bool CachedObjectLister::synced(const k8s::ResourceInfo& resource) const {
  std::lock_guard lock(mu_);
  const auto it = caches_.find(cacheKey(resource));
  return it != caches_.end() && it->second->informer->hasSynced();
}

void CachedObjectLister::count(Cache& cache, bool fromCache) {
  prometheus::Counter* counter = fromCache ? cache.fromCache : cache.fromApiServer;
  if (counter != nullptr) counter->Increment();
}

core::Result<ObjectSet> CachedObjectLister::list(const k8s::ResourceInfo& resource,
                                                 std::string_view namespaceName,
                                                 const core::LabelSelector& selector) {
  auto set = answer(resource, namespaceName, selector);
  if (!set) return set.status();
  return ObjectSet(**set);
}

core::Result<ObjectSet> CachedObjectLister::listNames(const k8s::ResourceInfo& resource,
                                                      std::string_view namespaceName,
                                                      const core::LabelSelector& selector) {
  auto set = answer(resource, namespaceName, selector);
  if (!set) return set.status();
  return ObjectSet{(*set)->all, (*set)->names, {}};
}

core::Result<std::shared_ptr<const ObjectSet>> CachedObjectLister::answer(
    const k8s::ResourceInfo& resource, std::string_view namespaceName,
    const core::LabelSelector& selector) {
  auto cache = cacheFor(resource);
  if (!cache->informer->hasSynced()) {
    count(*cache, false);
    if (!cache->loggedFallback.exchange(true)) {
      spdlog::info(
          "object cache: {} not synced yet, listing from the Kubernetes API until it is (logged "
          "once)",
          cache->label);
    }
    auto listed = fallback_.list(resource, namespaceName, selector);
    if (!listed) return listed.status();
    return std::make_shared<const ObjectSet>(std::move(*listed));
  }
  count(*cache, true);
  const kube::ObjectStore& store = cache->informer->store();
  const std::string_view ns = resource.namespaced ? namespaceName : std::string_view();
  std::string key(ns);
  key += '\n';
  key += selector.toString();
  // Read before listing: a write that lands after the list makes the answer stale, and it
  // also moves the generation past the one recorded with it.
  const uint64_t generation = store.generation();
  {
    std::lock_guard lock(cache->answersMu);
    if (auto it = cache->answers.find(key);
        it != cache->answers.end() && it->second.generation == generation) {
      return it->second.set;
    }
  }
  const auto stored = store.list(selector, ns);
  std::vector<ListedObject> objects;
  objects.reserve(stored.size());
  for (const auto& item : stored) {
    if (auto object = listedObjectOf(*item)) objects.push_back(std::move(*object));
  }
  auto set = std::make_shared<const ObjectSet>(objectSetOf(std::move(objects)));
  {
    std::lock_guard lock(cache->answersMu);
    if (cache->answers.size() >= kMaxAnswersPerResource) cache->answers.clear();
    cache->answers[std::move(key)] = {generation, set};
  }
  return set;
}

}  // namespace gpuscale::adapter
