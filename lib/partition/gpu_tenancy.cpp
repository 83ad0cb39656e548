#include "gpuscale/partition/gpu_tenancy.h"

#include <algorithm>

namespace gpuscale::partition {

bool mayShareGpu(const Policy& policy, std::string_view a, std::string_view b) {
  if (a == b) return true;
  const auto& listed = policy.shareAcrossNamespaces;
  if (listed.size() == 1 && listed.front() == "*") return true;
  auto has = [&](std::string_view ns) {
    return std::find(listed.begin(), listed.end(), ns) != listed.end();
  };
  return has(a) && has(b);
}

std::string otherGpuTenant(const NodeState& node, std::string_view base, std::string_view ns,
                           const Policy& policy) {
  auto it = node.gpuTenants.find(base);
  if (it == node.gpuTenants.end()) return "";
  for (const auto& tenant : it->second) {
    if (!mayShareGpu(policy, ns, tenant)) return tenant;
  }
  return "";
}

}  // namespace gpuscale::partition
