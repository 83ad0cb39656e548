// Informer: keeps an ObjectStore in step with one collection of the Kubernetes API, so readers ask
// the cache instead of LISTing per request.
//
// Loop (on its own thread): LIST (paginated) -> replace the store -> WATCH from the list's
// resourceVersion with bookmarks -> apply events, remembering the newest resourceVersion. When a
// stream ends normally the watch resumes from that version; a 410 Gone/Expired (the version was
// compacted) triggers a fresh LIST; any other failure (transport, 429, 5xx) backs off
// exponentially (initialBackoff doubling to maxBackoff, reset after success) and resumes. Every
// resyncPeriod (if non-zero) each cached object is re-delivered to onUpdate(obj, obj).
//
// Only what readers need is kept: `metadataOnly` lists and watches PartialObjectMetadata (names,
// namespaces, labels, annotations, owner references; no spec or status), and `transform` (applied
// to every listed or watched object before it is stored) can drop fields further or keep a few
// the metadata lacks (a pod's phase). A LIST hands it to the client (ListOptions::transform), so
// each item is trimmed as its page is decoded and no more than one page is ever held whole, on
// the first list and on every relist alike. Memory then grows with the objects' count, not their
// size, and so does the peak of the first LIST.
//
// Handlers run on the informer's threads, one at a time (serialised), never under the store's
// lock; they must not block for long. A relist delivers adds, updates and deletes for the
// difference against the cache, so no event is lost across a 410.
//
// Watch starts, 410 relists and completed LISTs are reported to the client's observer
// (KubeClient::observer(), see client_observer.h), labelled with the bounded resource name.
//
// Thread safety: everything except addHandler (call it before start()) is thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "gpuscale/kube/client.h"
#include "gpuscale/kube/object_store.h"

namespace gpuscale::kube {

struct InformerOptions {
  ResourceRef resource;  // a collection; namespaceName "" = all namespaces
  std::string labelSelector;
  std::string fieldSelector;
  int64_t pageSize = 500;
  int watchTimeoutSeconds = 300;
  std::chrono::milliseconds initialBackoff{500};
  std::chrono::milliseconds maxBackoff{30000};
  std::chrono::milliseconds resyncPeriod{0};
  bool metadataOnly = false;
  // Applied to each object before it is stored (listed items as their page is decoded); null
  // keeps objects as they came. It must keep metadata.name, metadata.namespace and
  // metadata.resourceVersion. Runs on the informer's thread.
  std::function<Object(Object)> transform;
};

struct InformerHandler {
  std::function<void(const Object&)> onAdd;
  std::function<void(const Object& before, const Object& after)> onUpdate;
  std::function<void(const Object&)> onDelete;
};

class Informer {
 public:
  struct Stats {
    uint64_t lists = 0;
    uint64_t watches = 0;
    uint64_t relistsAfterGone = 0;
    uint64_t failures = 0;
    uint64_t bookmarks = 0;
  };

  Informer(std::shared_ptr<KubeClient> client, InformerOptions options);
  ~Informer();  // stops

  void addHandler(InformerHandler handler);
  void start();
  void stop();

  // True once the first LIST has been applied.
  bool hasSynced() const { return synced_.load(); }
  bool waitForSync(std::chrono::milliseconds timeout) const;

  const ObjectStore& store() const { return store_; }
  std::string resourceVersion() const;
  Stats stats() const;

 private:
  void run(std::stop_token stop);
  void resyncLoop(std::stop_token stop);
  bool relist(std::stop_token stop);
  bool applyEvent(const WatchEvent& event);
  void dispatch(const std::vector<ObjectStore::Change>& changes);
  // Sleeps for `delay` unless stopped first; returns false if stopped.
  bool sleepFor(std::chrono::milliseconds delay, std::stop_token stop);

  std::shared_ptr<KubeClient> client_;
  InformerOptions options_;
  std::shared_ptr<ClientObserver> observer_;  // the client's; may be null
  std::string resourceLabel_;
  ObjectStore store_;
  std::vector<InformerHandler> handlers_;
  std::mutex dispatchMu_;

  mutable std::mutex mu_;
  mutable std::condition_variable_any cv_;
  std::string resourceVersion_;
  Stats stats_;
  std::atomic<bool> synced_{false};

  std::jthread loop_;
  std::jthread resync_;
};

}  // namespace gpuscale::kube
