#include "gpuscale/reconciler/published_devices.h"

#include "gpuscale/k8s/status_predicates.h"
#include "gpuscale/partition/dra_capacity.h"

namespace gpuscale::reconciler {

core::Result<std::optional<PublishedDevices>> publishedDevices(kube::KubeClient& client,
                                                               const std::string& node) {
  kube::ListOptions options;
  options.fieldSelector = "spec.nodeName=" + node;
  auto listed = client.list(
      kube::ResourceRef::collection("resource.k8s.io", "v1", "resourceslices"), options);
  if (!listed) {
    if (k8s::isNotFound(listed.status()) || listed.status().httpCode() == 403) {
      return std::optional<PublishedDevices>{};
    }
    return listed.status();
  }
  std::vector<partition::ResourceSliceObject> slices;
  for (const auto& item : listed->items) {
    // A slice that does not read is left out, as the snapshot skips it.
    if (auto slice = partition::readResourceSlice(item); slice && slice->nodeName == node) {
      slices.push_back(std::move(*slice));
    }
  }
  const auto pools = partition::draPools(slices, {});
  const auto pool = pools.find(node);
  if (pool == pools.end()) return std::optional<PublishedDevices>{};
  PublishedDevices out;
  out.partitionable = pool->second.partitionable();
  if (pool->second.complete()) out.devices = partition::draCapacity(pool->second);
  return std::optional<PublishedDevices>(std::move(out));
}

}  // namespace gpuscale::reconciler
