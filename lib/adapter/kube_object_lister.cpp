#include "gpuscale/adapter/kube_object_lister.h"

#include <algorithm>

namespace gpuscale::adapter {

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
  out.names.reserve(listed->items.size());
  for (const kube::Object& item : listed->items) {
    const auto metadata = item.find("metadata");
    if (metadata == item.end() || !metadata->is_object()) continue;
    const auto name = metadata->find("name");
    if (name == metadata->end() || !name->is_string()) continue;
    // Terminating objects are on their way out; the HPA counts only live pods too.
    if (metadata->contains("deletionTimestamp")) continue;
    out.names.push_back(name->get<std::string>());
  }
  std::sort(out.names.begin(), out.names.end());
  return out;
}

}  // namespace gpuscale::adapter
