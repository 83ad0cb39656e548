// DiscoveryResourceMapper: the rule engine's ResourceMapper built from the Kubernetes API's
// discovery documents (/api, /api/v1, /apis, /apis/<group>/<preferred version>), so operators can
// name any resource the cluster serves, including CRDs installed later (refresh() or
// startRefreshing()).
//
// Resolution follows the RESTMapper: case-insensitive; the plural, the singular or the kind; an
// empty group searches the core group first and then the groups in the order discovery lists them
// (kube-apiserver orders them by priority). Subresources ("pods/status") are not resources here.
//
// Until the first successful refresh() the mapper knows the `initial` table it was built with
// (nothing by default: resourceFor is NotFound). A failed refresh keeps the previous table. Groups
// whose discovery fails (an unavailable aggregated API, common while an APIService is down) are
// skipped, and their previous entries kept. The metric groups (custom.metrics.k8s.io,
// external.metrics.k8s.io) are not read: they list metrics, not object kinds, and an adapter
// reading them would ask itself through the aggregator.
//
// Thread safety: thread-safe. Tables are immutable snapshots swapped atomically. A reference from
// resources() stays valid for the mapper's lifetime: superseded tables are retained, and a table is
// replaced only when discovery actually changed (rare: CRDs and APIServices coming and going).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/kube/client.h"

namespace gpuscale::kube {

class DiscoveryResourceMapper final : public k8s::ResourceMapper {
 public:
  explicit DiscoveryResourceMapper(std::shared_ptr<KubeClient> client,
                                   std::vector<k8s::ResourceInfo> initial = {});
  ~DiscoveryResourceMapper() override;

  // Reads discovery now. Errors only when the core group (/api/v1) or /apis cannot be read.
  core::Status refresh();
  // Calls refresh() every `interval` on a background thread until destruction.
  void startRefreshing(std::chrono::seconds interval);
  // Counts table replacements: it changes exactly when a refresh() changed what the mapper knows.
  uint64_t generation() const;

  core::Result<k8s::ResourceInfo> resourceFor(const k8s::GroupResource& gr) const override;
  const std::vector<k8s::ResourceInfo>& resources() const override;

 private:
  using Table = std::vector<k8s::ResourceInfo>;
  std::shared_ptr<const Table> current() const;

  std::shared_ptr<KubeClient> client_;
  mutable std::mutex mu_;
  std::shared_ptr<const Table> table_;
  std::vector<std::shared_ptr<const Table>> retired_;
  uint64_t generation_ = 0;
  std::jthread refresher_;
};

// Parses one APIResourceList (a /api/v1 or /apis/<g>/<v> document) into ResourceInfos for `group`.
std::vector<k8s::ResourceInfo> parseResourceList(const Object& list, const std::string& group,
                                                 const std::string& version);

}  // namespace gpuscale::kube
