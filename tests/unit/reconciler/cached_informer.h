// A ReadCache (read_cache.h) on an informer over a fake kube-apiserver, as the controller installs
// one: the informer's transform and its delete handler. Not started: a test creates its objects
// first, then starts the informer.
#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include "fakes/fake_kube_client.h"
#include "gpuscale/kube/informer.h"
#include "gpuscale/reconciler/read_cache.h"

namespace gpuscale::reconciler::testing {

template <class Cache>
struct CachedInformer {
  template <class... CacheArgs>
  CachedInformer(const kube::ResourceRef& resource, StoreKeeps keeps, CacheArgs&&... args)
      : cache(std::forward<CacheArgs>(args)...) {
    kube::InformerOptions options;
    options.resource = resource;
    options.initialBackoff = std::chrono::milliseconds(10);
    options.transform = cache.transform(keeps);
    informer = std::make_unique<kube::Informer>(fake, options);
    informer->addHandler(cache.handler());
  }
  ~CachedInformer() { informer->stop(); }
  std::shared_ptr<gpuscale::testing::FakeKubeClient> fake =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  Cache cache;  // before the informer, which calls into it
  std::unique_ptr<kube::Informer> informer;
};

}  // namespace gpuscale::reconciler::testing
