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
  ObjectSet out;
  out.objects.reserve(listed->items.size());
  for (const kube::Object& item : listed->items) {
    const auto metadata = item.find("metadata");
    if (metadata == item.end() || !metadata->is_object()) continue;
    const auto name = metadata->find("name");
    if (name == metadata->end() || !name->is_string()) continue;
    // Terminating objects are on their way out; the HPA counts only live pods too.
    if (metadata->contains("deletionTimestamp")) continue;
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
    out.objects.push_back(std::move(object));
  }
  std::sort(out.objects.begin(), out.objects.end(), [](const auto& a, const auto& b) {
    return std::tie(a.namespaceName, a.name) < std::tie(b.namespaceName, b.name);
  });
  out.names.reserve(out.objects.size());
  for (const ListedObject& object : out.objects) out.names.push_back(object.name);
  return out;
}

}  // namespace gpuscale::adapter
