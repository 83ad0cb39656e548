#include "node_resource_table.h"

#include "gpuscale/partition/resource_names.h"

namespace gpuscale::partition::detail {

NodeResourceTable::NodeResourceTable(const std::vector<NodeState>& nodes) {
  auto intern = [&](const auto& counts) {
    for (const auto& entry : counts) ids_.try_emplace(entry.first, static_cast<int>(ids_.size()));
  };
  for (const NodeState& n : nodes) {
    intern(n.devices);
    intern(n.used);
    intern(n.sharedReplicas);
  }
  width_ = ids_.size();
  devices_.assign(nodes.size() * width_, 0);
  used_.assign(nodes.size() * width_, 0);
  replicas_.assign(nodes.size() * width_, 1);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto fill = [&](const auto& counts, auto& rows) {
      for (const auto& [name, n] : counts) {
        rows[i * width_ + static_cast<std::size_t>(ids_.find(name)->second)] = n;
      }
    };
    fill(nodes[i].devices, devices_);
    fill(nodes[i].used, used_);
    fill(nodes[i].sharedReplicas, replicas_);
  }
}

int NodeResourceTable::id(std::string_view resource) const {
  auto it = ids_.find(resource);
  return it == ids_.end() ? kAbsent : it->second;
}

NodeResourceTable::Key NodeResourceTable::key(std::string_view resource) const {
  return {id(resource), id(unsharedResourceName(resource))};
}

}  // namespace gpuscale::partition::detail
