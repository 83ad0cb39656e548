#include "gpuscale/kube/object_store.h"

#include <algorithm>
#include <mutex>

#include "gpuscale/k8s/object_accessors.h"

namespace gpuscale::kube {
namespace {

const Object& metadataOf(const Object& object) { return k8s::objectField(object, "metadata"); }

std::string labelKey(std::string_view key, std::string_view value) {
  std::string out(key);
  out += '=';
  out += value;
  return out;
}

}  // namespace

std::string ObjectStore::keyOf(const Object& object) {
  const std::string ns = k8s::namespaceOf(object);
  const std::string name = k8s::nameOf(object);
  return ns.empty() ? name : ns + "/" + name;
}

core::Labels ObjectStore::labelsOf(const Object& object) {
  core::Labels labels;
  const Object& meta = metadataOf(object);
  if (const auto it = meta.find("labels"); it != meta.end() && it->is_object()) {
    for (const auto& [key, value] : it->items()) {
      if (value.is_string()) labels.emplace(key, value.get<std::string>());
    }
  }
  return labels;
}

void ObjectStore::indexLocked(const std::string& key, const Object& object) {
  byNamespace_[k8s::namespaceOf(object)].insert(key);
  for (const auto& [k, v] : labelsOf(object)) byLabel_[labelKey(k, v)].insert(key);
}

void ObjectStore::unindexLocked(const std::string& key, const Object& object) {
  const auto drop = [&key](auto& index, const std::string& bucket) {
    if (auto it = index.find(bucket); it != index.end()) {
      it->second.erase(key);
      if (it->second.empty()) index.erase(it);
    }
  };
  drop(byNamespace_, k8s::namespaceOf(object));
  for (const auto& [k, v] : labelsOf(object)) drop(byLabel_, labelKey(k, v));
}

ObjectStore::Change ObjectStore::putLocked(std::string key, Ptr object) {
  generation_.fetch_add(1, std::memory_order_acq_rel);
  Change change;
  change.after = object;
  if (auto it = objects_.find(key); it != objects_.end()) {
    change.before = it->second;
    unindexLocked(key, *it->second);
  }
  indexLocked(key, *object);
  objects_[std::move(key)] = std::move(object);
  return change;
}

ObjectStore::Change ObjectStore::eraseLocked(const std::string& key) {
  Change change;
  auto it = objects_.find(key);
  if (it == objects_.end()) return change;
  generation_.fetch_add(1, std::memory_order_acq_rel);
  change.before = it->second;
  unindexLocked(key, *it->second);
  objects_.erase(it);
  return change;
}

std::vector<ObjectStore::Change> ObjectStore::replace(std::vector<Object> items) {
  std::vector<Change> changes;
  std::unordered_set<std::string> seen;
  std::unique_lock lock(mu_);
  for (auto& item : items) {
    std::string key = keyOf(item);
    seen.insert(key);
    auto existing = objects_.find(key);
    if (existing != objects_.end() && *existing->second == item) continue;
    changes.push_back(putLocked(std::move(key), std::make_shared<const Object>(std::move(item))));
  }
  std::vector<std::string> gone;
  for (const auto& [key, object] : objects_) {
    if (!seen.contains(key)) gone.push_back(key);
  }
  for (const auto& key : gone) changes.push_back(eraseLocked(key));
  return changes;
}

ObjectStore::Change ObjectStore::upsert(Object object) {
  std::string key = keyOf(object);
  std::unique_lock lock(mu_);
  return putLocked(std::move(key), std::make_shared<const Object>(std::move(object)));
}

ObjectStore::Change ObjectStore::erase(const Object& object) {
  std::unique_lock lock(mu_);
  return eraseLocked(keyOf(object));
}

ObjectStore::Ptr ObjectStore::get(std::string_view ns, std::string_view name) const {
  const std::string key =
      ns.empty() ? std::string(name) : std::string(ns) + "/" + std::string(name);
  std::shared_lock lock(mu_);
  const auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<ObjectStore::Ptr> ObjectStore::list(const core::LabelSelector& selector,
                                                std::string_view ns) const {
  std::shared_lock lock(mu_);
  // The narrowest candidate set the indexes can give.
  std::vector<const std::string*> candidates;
  bool narrowed = false;
  const auto consider = [&](std::vector<const std::string*> keys) {
    if (!narrowed || keys.size() < candidates.size()) candidates = std::move(keys);
    narrowed = true;
  };
  for (const auto& requirement : selector.requirements()) {
    using Op = core::SelectorOperator;
    if (requirement.op != Op::kEquals && requirement.op != Op::kDoubleEquals &&
        requirement.op != Op::kIn) {
      continue;
    }
    std::vector<const std::string*> keys;
    for (const auto& value : requirement.values) {
      if (auto it = byLabel_.find(labelKey(requirement.key, value)); it != byLabel_.end()) {
        for (const auto& key : it->second) keys.push_back(&key);
      }
    }
    consider(std::move(keys));
  }
  if (!ns.empty()) {
    std::vector<const std::string*> keys;
    if (auto it = byNamespace_.find(std::string(ns)); it != byNamespace_.end()) {
      for (const auto& key : it->second) keys.push_back(&key);
    }
    consider(std::move(keys));
  }
  if (!narrowed) {
    for (const auto& [key, object] : objects_) candidates.push_back(&key);
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  std::vector<Ptr> out;
  for (const std::string* key : candidates) {
    const Ptr& object = objects_.at(*key);
    if (!ns.empty() && k8s::namespaceOf(*object) != ns) continue;
    if (!selector.empty() && !selector.matches(labelsOf(*object))) continue;
    out.push_back(object);
  }
  return out;
}

std::vector<ObjectStore::Ptr> ObjectStore::all() const { return list(core::LabelSelector()); }

size_t ObjectStore::size() const {
  std::shared_lock lock(mu_);
  return objects_.size();
}

}  // namespace gpuscale::kube
