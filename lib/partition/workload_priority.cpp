#include "gpuscale/partition/workload_priority.h"

#include <fmt/format.h>

#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

WorkloadPriority workloadPriority(const Policy& policy, const ScaleTarget* target,
                                  const PriorityClasses& classes) {
  if (policy.priority) return {*policy.priority, fmt::format("policy {}", policy.name)};
  const std::string className = target != nullptr ? target->priorityClassName : "";
  if (!className.empty()) {
    const auto it = classes.values.find(className);
    if (it == classes.values.end()) {
      return {0, fmt::format("PriorityClass {} (not found: 0)", className)};
    }
    return {it->second, fmt::format("PriorityClass {}", className)};
  }
  if (classes.globalDefault) {
    const auto it = classes.values.find(*classes.globalDefault);
    if (it != classes.values.end()) {
      return {it->second, fmt::format("global default PriorityClass {}", it->first)};
    }
  }
  return {0, "none (0)"};
}

}  // namespace gpuscale::partition
