#include "gpuscale/reconciler/pod_cache.h"

#include "gpuscale/kube/object_store.h"

namespace gpuscale::reconciler {

kube::Object PodCache::identity(const kube::Object& pod) {
  kube::Object meta = kube::Object::object();
  const auto it = pod.find("metadata");
  if (it != pod.end() && it->is_object()) {
    for (const char* key : {"name", "namespace", "uid", "resourceVersion"}) {
      if (auto field = it->find(key); field != it->end()) meta[key] = *field;
    }
  }
  return {{"metadata", std::move(meta)}};
}

void PodCache::put(const kube::Object& pod) {
  // Read outside the lock: a pass asking for the records never waits for a Pod being read.
  auto record = std::make_shared<const partition::PodRecord>(partition::readPodRecord(pod));
  std::string key = kube::ObjectStore::keyOf(pod);
  std::lock_guard lock(mu_);
  records_[std::move(key)] = std::move(record);
}

void PodCache::erase(const kube::Object& pod) {
  const std::string key = kube::ObjectStore::keyOf(pod);
  std::lock_guard lock(mu_);
  records_.erase(key);
}

std::function<kube::Object(kube::Object)> PodCache::transform(bool keepObjects) {
  return [this, keepObjects](kube::Object pod) {
    put(pod);
    return keepObjects ? std::move(pod) : identity(pod);
  };
}

kube::InformerHandler PodCache::handler() {
  return {.onAdd = nullptr, .onUpdate = nullptr, .onDelete = [this](const kube::Object& pod) {
            erase(pod);
          }};
}

std::vector<PodCache::Record> PodCache::records() const {
  std::lock_guard lock(mu_);
  std::vector<Record> out;
  out.reserve(records_.size());
  for (const auto& [_, record] : records_) out.push_back(record);
  return out;
}

std::size_t PodCache::size() const {
  std::lock_guard lock(mu_);
  return records_.size();
}

}  // namespace gpuscale::reconciler
