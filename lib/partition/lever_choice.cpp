#include "gpuscale/partition/lever_choice.h"

#include <algorithm>

namespace gpuscale::partition {

bool waitsForGpuMapping(const NodeState& n, const Policy& policy) {
  const bool reshapes = std::find(policy.levers.begin(), policy.levers.end(), Lever::kMigReshape) !=
                        policy.levers.end();
  return n.gpuMappingSettling && reshapes && !n.inTransition && n.migManaged() &&
         n.migStrategy == MigStrategy::kMixed && policy.selectsNode(n.labels);
}

bool saturatedForTimeSlicing(const NodeState& n, std::string_view base, const Policy& policy) {
  auto it = n.utilization.find(base);
  return it != n.utilization.end() && it->second >= policy.timeSlicingSaturation;
}

}  // namespace gpuscale::partition
