// ReadCache: the objects of one watched kind, each read once per change into a typed record, so a
// pass builds its snapshot from typed values instead of reading thousands of objects' JSON again
// every pass (the reconciler's Pods: PodCache, pod_cache.h; its Nodes, HPAs, Deployments and
// StatefulSets: partition::ObjectRecord, object_record.h).
//
// It sits on the kind's informer (kube/informer.h) through two hooks the controller installs:
//   - transform(storeKeeps): the informer's transform. Each listed (page by page) or watched object
//     is read into its record, kept under namespace/name, and the informer's store keeps either
//     only the object's identity (name, namespace, uid, resourceVersion: enough for the store's
//     keys, the relist's difference and change detection; the object's JSON is then not kept at
//     all) or the object as given (StoreKeeps::kObject: others read the store too, or the
//     benchmark's baseline keeps whole objects, --trim-cached-objects=false).
//   - handler(): a deleted object's record goes (a watched DELETED, or an object a relist no longer
//     has).
// An object that does not read is kept as a record that says why (the record's `skipped`): the
// pass skips it exactly as it skips such an object of a dump (a counter, an Event once,
// `explain`).
//
// Thread safety: transform and handler run on the informer's thread; records() and size() may be
// called from any thread at the same time (one mutex, never held while reading an object). Records
// are immutable shared values: a pass (and the snapshot it builds, which may point into them) keeps
// those it got while the cache changes; a replaced record is freed when its last holder lets go.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpuscale/kube/informer.h"
#include "gpuscale/kube/object_store.h"

namespace gpuscale::reconciler {

// What an informer's store keeps of an object whose record a ReadCache keeps.
enum class StoreKeeps { kIdentity, kObject };

// metadata.name, namespace, uid and resourceVersion of `object`: what the store keeps with
// StoreKeeps::kIdentity.
kube::Object objectIdentity(const kube::Object& object);

template <class Record>
class ReadCache {
 public:
  using Ptr = std::shared_ptr<const Record>;
  // Reads an object into its record; never fails (a record says why an object does not read).
  using Read = std::function<Record(const kube::Object&)>;

  explicit ReadCache(Read read) : read_(std::move(read)) {}
  ReadCache(const ReadCache&) = delete;
  ReadCache& operator=(const ReadCache&) = delete;

  // The informer's transform (InformerOptions::transform).
  std::function<kube::Object(kube::Object)> transform(StoreKeeps keeps) {
    return [this, keeps](kube::Object object) {
      put(object);
      return keeps == StoreKeeps::kObject ? std::move(object) : objectIdentity(object);
    };
  }
  // The informer's handler (Informer::addHandler): forgets deleted objects.
  kube::InformerHandler handler() {
    return {.onAdd = nullptr, .onUpdate = nullptr, .onDelete = [this](const kube::Object& o) {
              const std::string key = kube::ObjectStore::keyOf(o);
              std::lock_guard lock(mu_);
              records_.erase(key);
            }};
  }

  // Every record, ordered by namespace/name.
  std::vector<Ptr> records() const {
    std::lock_guard lock(mu_);
    std::vector<Ptr> out;
    out.reserve(records_.size());
    for (const auto& [_, record] : records_) out.push_back(record);
    return out;
  }
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return records_.size();
  }

 private:
  void put(const kube::Object& object) {
    // Read outside the lock: a pass asking for the records never waits for an object being read.
    auto record = std::make_shared<const Record>(read_(object));
    std::string key = kube::ObjectStore::keyOf(object);
    std::lock_guard lock(mu_);
    records_[std::move(key)] = std::move(record);
  }

  const Read read_;
  mutable std::mutex mu_;
  std::map<std::string, Ptr> records_;  // by kube::ObjectStore::keyOf
};

}  // namespace gpuscale::reconciler
