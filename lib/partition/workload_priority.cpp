#include "gpuscale/partition/workload_priority.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

WorkloadPriority workloadPriority(const Policy& policy, const std::vector<const PodState*>& pods) {
  if (policy.priority) return {*policy.priority, fmt::format("policy {}", policy.name)};
  std::optional<int> lowest;
  int counted = 0;
  for (const PodState* pod : pods) {
    if (!pod->active() || pod->terminating) continue;
    const int value = pod->priority.value_or(0);
    lowest = lowest ? std::min(*lowest, value) : value;
    ++counted;
  }
  if (!lowest) return {0, "no pods yet (0)"};
  return {*lowest, fmt::format("pods' spec.priority (lowest of {} pod{})", counted,
                               counted == 1 ? "" : "s")};
}

}  // namespace gpuscale::partition
