#include "gpuscale/adapter/kube_object_lister.h"

#include <algorithm>
#include <tuple>

namespace gpuscale::adapter {
namespace {

std::string stringAt(const kube::Object& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::optional<ListedObject> listedObjectOf(const kube::Object& item) {
  const auto metadata = item.find("metadata");
  if (metadata == item.end() || !metadata->is_object()) return std::nullopt;
  const auto name = metadata->find("name");
  if (name == metadata->end() || !name->is_string()) return std::nullopt;
  if (metadata->contains("deletionTimestamp")) return std::nullopt;
  ListedObject object;
  object.name = name->get<std::string>();
  object.namespaceName = stringAt(*metadata, "namespace");
  if (const auto labels = metadata->find("labels");
      labels != metadata->end() && labels->is_object()) {
    for (const auto& [key, value] : labels->items()) {
      if (value.is_string()) object.labels.emplace(key, value.get<std::string>());
    }
  }
  if (const auto status = item.find("status"); status != item.end() && status->is_object()) {
    object.phase = stringAt(*status, "phase");
  }
  return object;
}

ObjectSet objectSetOf(std::vector<ListedObject> objects) {
  std::sort(objects.begin(), objects.end(), [](const auto& a, const auto& b) {
    return std::tie(a.namespaceName, a.name) < std::tie(b.namespaceName, b.name);
  });
  ObjectSet out;
  out.names.reserve(objects.size());
  for (const ListedObject& object : objects) out.names.push_back(object.name);
  out.objects = std::move(objects);
  return out;
}

KubeObjectLister::KubeObjectLister(std::shared_ptr<kube::KubeClient> client)
    : client_(std::move(client)) {}

core::Result<ObjectSet> KubeObjectLister::list(const k8s::ResourceInfo& resource,
                                               std::string_view namespaceName,
                                               const core::LabelSelector& selector) {
  const auto ref = kube::ResourceRef::collection(resource.groupResource.group, resource.version,
                                                 resource.groupResource.resource,
                                                 resource.namespaced ? namespaceName : "");
  kube::ListOptions options;
  options.labelSelector = selector.toString();
  options.resourceVersion = "0";
  auto listed = client_->list(ref, options);
  if (!listed) return listed.status();
  std::vector<ListedObject> objects;
  objects.reserve(listed->items.size());
  for (const kube::Object& item : listed->items) {
    if (auto object = listedObjectOf(item)) objects.push_back(std::move(*object));
  }
  return objectSetOf(std::move(objects));
}

}  // namespace gpuscale::adapter
