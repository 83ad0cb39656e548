// PodCache: the reconciler's Pods, each read once per change into a typed record
// (partition/pod_record.h), so a pass builds its snapshot from typed values instead of reading
// tens of thousands of Pods' JSON again every pass, and the Pods' JSON is not kept at all.
//
// It sits on the Pod informer (kube/informer.h) through two hooks the controller installs:
//   - transform(): the informer's transform. Each listed (page by page) or watched Pod is read into
//     its record, kept under namespace/name, and the informer's store keeps only the Pod's identity
//     (name, namespace, uid, resourceVersion): enough for the store's keys, the relist's
//     difference and change detection. With `keepObjects` (--trim-cached-objects=false) the store
//     keeps the whole object besides (the baseline the fleet benchmark measures against).
//   - handler(): a deleted Pod's record goes (a watched DELETED, or a Pod a relist no longer has).
// A Pod that does not read is kept as a record that says why (PodRecord::skipped): the pass skips
// it exactly as it skips a Pod of a dump (a counter, an Event once, `explain`).
//
// Thread safety: transform and handler run on the informer's thread; records() may be called from
// any thread at the same time (one mutex, never held while reading a Pod). Records are immutable
// shared values: a pass keeps those it got while the cache changes.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpuscale/kube/informer.h"
#include "gpuscale/partition/pod_record.h"

namespace gpuscale::reconciler {

class PodCache {
 public:
  using Record = std::shared_ptr<const partition::PodRecord>;

  // The Pod informer's transform (InformerOptions::transform).
  std::function<kube::Object(kube::Object)> transform(bool keepObjects);
  // The Pod informer's handler (Informer::addHandler): forgets deleted Pods.
  kube::InformerHandler handler();

  // Every record, ordered by namespace/name.
  std::vector<Record> records() const;
  std::size_t size() const;

  // What the informer's store keeps of a Pod: metadata.name, namespace, uid and resourceVersion.
  static kube::Object identity(const kube::Object& pod);

 private:
  void put(const kube::Object& pod);
  void erase(const kube::Object& pod);

  mutable std::mutex mu_;
  std::map<std::string, Record> records_;  // by kube::ObjectStore::keyOf
};

}  // namespace gpuscale::reconciler
