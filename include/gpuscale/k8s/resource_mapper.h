// The mapper that normalises what operators and requests write ("pod", "Pods", "deployment.apps",
// "deployments.apps") to the canonical plural form of a Kubernetes resource.
//
// ResourceMapper is the seam that stands in for client-go's RESTMapper (prometheus-adapter builds
// one from full API discovery). BuiltinResourceTable is the implementation used when no Kubernetes
// API is available
// (`rules check|render`, standalone mode, tests): the core group plus apps, batch,
// networking.k8s.io and autoscaling. kube::DiscoveryResourceMapper is the discovery-backed one.
//
// Normalisation (ResourceFor semantics): case-insensitive; the resource may be plural, singular or
// the kind; with an empty group, groups are searched in priority order (core first, then apps,
// batch, networking.k8s.io, autoscaling), as the RESTMapper does.
//
// Thread safety: implementations must be safe for concurrent const use; BuiltinResourceTable is
// immutable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/k8s/group_resource.h"

namespace gpuscale::k8s {

struct ResourceInfo {
  GroupResource groupResource;  // canonical: plural resource
  std::string version;          // preferred version, "v1"
  std::string singular;         // "pod"
  std::string kind;             // "Pod"
  bool namespaced = true;
};

class ResourceMapper {
 public:
  virtual ~ResourceMapper() = default;
  // Resolves `gr` (any accepted spelling) to the canonical resource. Unknown → Status::notFound
  // ("the server doesn't have a resource type \"x\"").
  virtual core::Result<ResourceInfo> resourceFor(const GroupResource& gr) const = 0;
  // Every resource the mapper knows, in priority order.
  virtual const std::vector<ResourceInfo>& resources() const = 0;
};

class BuiltinResourceTable final : public ResourceMapper {
 public:
  BuiltinResourceTable();
  core::Result<ResourceInfo> resourceFor(const GroupResource& gr) const override;
  const std::vector<ResourceInfo>& resources() const override { return resources_; }

  // A shared instance (immutable).
  static const BuiltinResourceTable& instance();

 private:
  std::vector<ResourceInfo> resources_;
  std::vector<std::string> kindsLower_;  // parallel to resources_
};

}  // namespace gpuscale::k8s
