// GroupResource: a Kubernetes group-resource ("deployments.apps" is {group "apps", resource
// "deployments"}; "pods" is the core group), as requests name it and rules map to it. One type for
// every module: the API layer's requests, the rules' resource overrides and the resource mappers.
//
// Thread safety: a value type.
#pragma once

#include <compare>
#include <string>
#include <string_view>

namespace gpuscale::k8s {

struct GroupResource {
  std::string group;     // "" for the core group
  std::string resource;  // plural once normalised by a ResourceMapper

  // "pods", "deployments.apps" (schema.GroupResource.String()).
  std::string toString() const;
  // Splits at the first '.' (schema.ParseGroupResource): "deployments.apps" → {apps, deployments};
  // "pods" → {"", pods}.
  static GroupResource parse(std::string_view text);

  friend bool operator==(const GroupResource&, const GroupResource&) = default;
  friend auto operator<=>(const GroupResource&, const GroupResource&) = default;
};

}  // namespace gpuscale::k8s
