#include "fakes/fake_kube_client.h"

#include <fmt/format.h>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/kube/object_store.h"

namespace gpuscale::testing {
namespace {

using kube::Object;

const std::string& field(const Object& object, const char* name) {
  static const std::string empty;
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->contains(name)) return empty;
  return (*meta)[name].get_ref<const std::string&>();
}

// Only the field selectors gpuscale uses: metadata.name=, metadata.namespace= and spec.nodeName=
// (pods, ResourceSlices).
bool fieldsMatch(const std::string& selector, const Object& object) {
  if (selector.empty()) return true;
  const auto eq = selector.find('=');
  const std::string key = selector.substr(0, eq);
  const std::string value = selector.substr(eq + 1);
  if (key == "metadata.name") return field(object, "name") == value;
  if (key == "metadata.namespace") return field(object, "namespace") == value;
  if (key == "spec.nodeName") {
    const auto spec = object.find("spec");
    return spec != object.end() && spec->is_object() && spec->value("nodeName", "") == value;
  }
  return false;
}

bool selected(const kube::ResourceRef& ref, const std::string& labels, const std::string& fields,
              const Object& object) {
  if (!ref.namespaceName.empty() && field(object, "namespace") != ref.namespaceName) return false;
  if (!fieldsMatch(fields, object)) return false;
  auto selector = core::LabelSelector::parse(labels);
  return selector && selector->matches(kube::ObjectStore::labelsOf(object));
}

}  // namespace

std::string FakeKubeClient::collectionKey(const kube::ResourceRef& ref) {
  return ref.group + "/" + ref.version + "/" + ref.resource;
}

std::string FakeKubeClient::objectKey(const kube::ResourceRef& ref, const Object& object) {
  const std::string& ns = field(object, "namespace");
  const std::string& name = ref.name.empty() ? field(object, "name") : ref.name;
  const std::string& objectNs = ns.empty() ? ref.namespaceName : ns;
  return objectNs.empty() ? name : objectNs + "/" + name;
}

core::Status FakeKubeClient::injected(const std::string& verb) {
  ++calls_[verb];
  auto& queue = failures_[verb];
  if (queue.empty()) return {};
  core::Status status = queue.front();
  queue.pop_front();
  return status;
}

Object FakeKubeClient::storeLocked(const kube::ResourceRef& ref, Object object,
                                   kube::WatchEvent::Type type) {
  object["metadata"]["resourceVersion"] = std::to_string(++version_);
  if (!ref.namespaceName.empty()) object["metadata"]["namespace"] = ref.namespaceName;
  const std::string collection = collectionKey(ref);
  const std::string key = objectKey(ref, object);
  if (type == kube::WatchEvent::Type::kDeleted) {
    objects_[collection].erase(key);
  } else {
    objects_[collection][key] = object;
  }
  if (recordEvents_) events_.push_back({collection, {type, object}, version_});
  cv_.notify_all();
  return object;
}

Object* FakeKubeClient::findLocked(const kube::ResourceRef& ref) {
  auto& collection = objects_[collectionKey(ref)];
  const std::string key = ref.namespaceName.empty() ? ref.name : ref.namespaceName + "/" + ref.name;
  const auto it = collection.find(key);
  return it == collection.end() ? nullptr : &it->second;
}

core::Result<Object> FakeKubeClient::get(const kube::ResourceRef& ref) {
  std::lock_guard lock(mu_);
  if (auto status = injected("get"); !status.ok()) return status;
  const Object* found = findLocked(ref);
  if (found == nullptr) {
    return core::Status::notFound(fmt::format("{} \"{}\" not found", ref.resource, ref.name));
  }
  return *found;
}

core::Result<kube::ObjectList> FakeKubeClient::list(const kube::ResourceRef& ref,
                                                    const kube::ListOptions& options) {
  std::lock_guard lock(mu_);
  if (auto status = injected("list"); !status.ok()) return status;
  kube::ObjectList out;
  out.resourceVersion = std::to_string(version_);
  for (const auto& [key, object] : objects_[collectionKey(ref)]) {
    if (selected(ref, options.labelSelector, options.fieldSelector, object)) {
      Object item = options.metadataOnly ? kube::partialObjectMetadata(object) : object;
      out.items.push_back(options.transform ? options.transform(std::move(item)) : std::move(item));
    }
  }
  return out;
}

core::Status FakeKubeClient::watch(const kube::ResourceRef& ref, const kube::WatchOptions& options,
                                   const kube::WatchHandler& handler, std::stop_token stop) {
  // Registered before taking the lock: the callback locks mu_ itself.
  std::stop_callback wake(stop, [this] {
    std::lock_guard inner(mu_);
    cv_.notify_all();
  });
  std::unique_lock lock(mu_);
  if (auto status = injected("watch"); !status.ok()) return status;
  int64_t from = options.resourceVersion.empty() ? version_ : std::stoll(options.resourceVersion);
  if (from < compactedBelow_) {
    return core::Status(410, "Expired",
                        fmt::format("too old resource version: {} ({})", from, compactedBelow_));
  }
  ++openWatches_;
  cv_.notify_all();
  const uint64_t generation = endGeneration_;
  const std::string collection = collectionKey(ref);
  core::Status result;
  while (true) {
    std::vector<kube::WatchEvent> pending;
    for (const auto& event : events_) {
      if (event.version <= from) continue;
      // Past every newer event, whatever its collection: the wait below sleeps until a newer one.
      from = event.version;
      if (event.collection != collection) continue;
      if (event.event.type == kube::WatchEvent::Type::kBookmark ||
          selected(ref, options.labelSelector, options.fieldSelector, event.event.object)) {
        if (event.event.type != kube::WatchEvent::Type::kBookmark || options.allowWatchBookmarks) {
          pending.push_back(event.event);
          if (options.metadataOnly && event.event.type != kube::WatchEvent::Type::kBookmark) {
            pending.back().object = kube::partialObjectMetadata(event.event.object);
          }
        }
      }
    }
    bool keepGoing = true;
    if (!pending.empty()) {
      lock.unlock();
      for (const auto& event : pending) {
        if (!(keepGoing = handler(event))) break;
      }
      lock.lock();
    }
    if (!keepGoing || stop.stop_requested()) break;
    if (endGeneration_ != generation) {
      result = endStatus_;
      break;
    }
    cv_.wait(lock, [&] {
      return stop.stop_requested() || endGeneration_ != generation ||
             (!events_.empty() && events_.back().version > from);
    });
  }
  --openWatches_;
  return result;
}

core::Result<Object> FakeKubeClient::create(const kube::ResourceRef& ref, const Object& object) {
  CreateHook hook;
  {
    std::lock_guard lock(mu_);
    if (auto status = injected("create"); !status.ok()) return status;
    if (auto it = createHooks_.find(ref.resource); it != createHooks_.end()) hook = it->second;
  }
  if (hook) return hook(object);
  std::lock_guard lock(mu_);
  if (objects_[collectionKey(ref)].contains(objectKey(ref, object))) {
    return core::Status(
        409, "AlreadyExists",
        fmt::format("{} \"{}\" already exists", ref.resource, field(object, "name")));
  }
  return storeLocked(ref, object, kube::WatchEvent::Type::kAdded);
}

core::Result<Object> FakeKubeClient::update(const kube::ResourceRef& ref, const Object& object) {
  std::lock_guard lock(mu_);
  if (auto status = injected("update"); !status.ok()) return status;
  auto& collection = objects_[collectionKey(ref)];
  const auto it = collection.find(objectKey(ref, object));
  if (it == collection.end()) return core::Status::notFound(ref.resource + " not found");
  const std::string& expected = field(object, "resourceVersion");
  if (!expected.empty() && expected != field(it->second, "resourceVersion")) {
    return core::Status(409, "Conflict",
                        "the object has been modified; please apply your changes to the latest "
                        "version and try again");
  }
  return storeLocked(ref, object, kube::WatchEvent::Type::kModified);
}

core::Result<Object> FakeKubeClient::patch(const kube::ResourceRef& ref, kube::PatchType type,
                                           const Object& patch) {
  std::lock_guard lock(mu_);
  if (auto status = injected("patch"); !status.ok()) return status;
  Object* found = findLocked(ref);
  if (found == nullptr) return core::Status::notFound(ref.resource + " not found");
  Object patched = *found;
  // As kube-apiserver: a merge patch carrying metadata.resourceVersion is a precondition.
  if (type == kube::PatchType::kMerge && patch.contains("metadata") &&
      patch["metadata"].is_object() && patch["metadata"].contains("resourceVersion") &&
      patch["metadata"]["resourceVersion"] != (*found)["metadata"]["resourceVersion"]) {
    return core::Status(409, "Conflict",
                        "the object has been modified; please apply your changes to the latest "
                        "version and try again");
  }
  try {
    if (type == kube::PatchType::kMerge) {
      patched.merge_patch(patch);
    } else {
      patched = patched.patch(patch);
    }
  } catch (const nlohmann::json::exception& e) {
    return core::Status(422, "Invalid", e.what());
  }
  return storeLocked(ref, patched, kube::WatchEvent::Type::kModified);
}

core::Status FakeKubeClient::remove(const kube::ResourceRef& ref) {
  std::lock_guard lock(mu_);
  if (auto status = injected("delete"); !status.ok()) return status;
  Object* found = findLocked(ref);
  if (found == nullptr) return core::Status::notFound(ref.resource + " not found");
  storeLocked(ref, *found, kube::WatchEvent::Type::kDeleted);
  return {};
}

core::Result<Object> FakeKubeClient::getPath(std::string_view path) {
  std::lock_guard lock(mu_);
  if (auto status = injected("getPath"); !status.ok()) return status;
  const auto it = paths_.find(path);
  if (it == paths_.end())
    return core::Status::notFound("the server could not find the requested resource");
  return it->second;
}

void FakeKubeClient::setCreateHook(const std::string& resource, CreateHook hook) {
  std::lock_guard lock(mu_);
  createHooks_[resource] = std::move(hook);
}

void FakeKubeClient::setPath(const std::string& path, Object document) {
  std::lock_guard lock(mu_);
  paths_[path] = std::move(document);
}

void FakeKubeClient::removePath(const std::string& path) {
  std::lock_guard lock(mu_);
  paths_.erase(path);
}

void FakeKubeClient::failNext(const std::string& verb, core::Status status, int count) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < count; ++i) failures_[verb].push_back(status);
}

void FakeKubeClient::compact() {
  std::lock_guard lock(mu_);
  compactedBelow_ = version_;
}

void FakeKubeClient::setRecordEvents(bool record) {
  std::lock_guard lock(mu_);
  recordEvents_ = record;
}

void FakeKubeClient::endWatches(core::Status status) {
  std::lock_guard lock(mu_);
  endStatus_ = std::move(status);
  ++endGeneration_;
  cv_.notify_all();
}

void FakeKubeClient::bookmark(const kube::ResourceRef& ref) {
  std::lock_guard lock(mu_);
  Object object = {{"metadata", {{"resourceVersion", std::to_string(++version_)}}}};
  events_.push_back({collectionKey(ref), {kube::WatchEvent::Type::kBookmark, object}, version_});
  cv_.notify_all();
}

int FakeKubeClient::calls(const std::string& verb) const {
  std::lock_guard lock(mu_);
  const auto it = calls_.find(verb);
  return it == calls_.end() ? 0 : it->second;
}

int FakeKubeClient::openWatches() const {
  std::lock_guard lock(mu_);
  return openWatches_;
}

std::string FakeKubeClient::currentResourceVersion() const {
  std::lock_guard lock(mu_);
  return std::to_string(version_);
}

}  // namespace gpuscale::testing
