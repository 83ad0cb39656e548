// ObjectStore: the informer's cache of Kubernetes objects, keyed by namespace/name, with an index
// by namespace and by label (key=value) so label-selector lookups touch only candidate objects.
//
// A selector with an equality or `in` requirement is answered from the label index (the
// requirement with the fewest candidates), anything else by scanning the namespace (or all);
// every candidate is then checked against the whole selector. Objects are immutable shared
// pointers: readers keep what they got even if the store changes afterwards.
//
// Thread safety: all methods are thread-safe (a shared mutex; readers run in parallel).
#pragma once

#include <atomic>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/kube/client.h"

namespace gpuscale::kube {

class ObjectStore {
 public:
  using Ptr = std::shared_ptr<const Object>;
  // What one write did: an add has no `before`, a delete no `after`; both set is an update.
  struct Change {
    Ptr before;
    Ptr after;
  };

  // Makes the store hold exactly `items` (a relist); returns the adds, updates and deletes.
  std::vector<Change> replace(std::vector<Object> items);
  Change upsert(Object object);
  // Removes the object with the same namespace/name; an empty Change if it was not there.
  Change erase(const Object& object);

  Ptr get(std::string_view ns, std::string_view name) const;
  // Objects in `ns` ("" = every namespace) whose labels match `selector`, ordered by
  // namespace/name.
  std::vector<Ptr> list(const core::LabelSelector& selector, std::string_view ns = {}) const;
  std::vector<Ptr> all() const;
  size_t size() const;
  // Grows with every write that changed the store (an add, an update to a different object, a
  // delete), never otherwise: readers that derive data from list() can keep it while this stays.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  static std::string keyOf(const Object& object);  // "ns/name" or "name"
  static core::Labels labelsOf(const Object& object);

 private:
  void indexLocked(const std::string& key, const Object& object);
  void unindexLocked(const std::string& key, const Object& object);
  Change putLocked(std::string key, Ptr object);
  Change eraseLocked(const std::string& key);

  mutable std::shared_mutex mu_;
  std::atomic<uint64_t> generation_{0};
  std::unordered_map<std::string, Ptr> objects_;
  std::unordered_map<std::string, std::unordered_set<std::string>> byNamespace_;
  std::unordered_map<std::string, std::unordered_set<std::string>> byLabel_;  // "k=v"
};

}  // namespace gpuscale::kube
