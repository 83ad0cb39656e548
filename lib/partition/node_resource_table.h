// Each node's per-resource counts of a snapshot (NodeState::devices, ::used, ::sharedReplicas) in
// flat rows indexed by interned resource names: what demand detection and the planner look up for
// every workload on every eligible node. Private to lib/partition.
//
// Why: with a thousand nodes and a thousand HPAs whose pods may land anywhere, a pass asks "how
// many units of R does node i offer, and how many are used" about a million times. As string-keyed
// map finds (names sharing the long "nvidia.com/mig-" prefix) that was most of a pass's CPU; here a
// workload's resource is looked up once (id()) and each node costs an array index.
//
// Contract: the values are exactly those of the maps they come from: devices(i, id(R)) ==
// nodes[i].devices[R] (0 when absent), used(i, id(R)) == nodes[i].used[R] (0 when absent),
// replicas(i, id(R)) == nodes[i].sharedReplicas[R] (1 when absent); a name no node has gets
// kAbsent, for which they are 0, 0 and 1. So capacity(i, R) == nodes[i].capacityFor(R).
//
// Thread safety: an immutable value once built; it copies what it reads, so it stays valid (and
// stale) if the nodes change afterwards. Build it per pass, after the snapshot is complete.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition::detail {

class NodeResourceTable {
 public:
  static constexpr int kAbsent = -1;

  // A resource's id and the id of its unshared (base) name: what capacity and usage are read by.
  struct Key {
    int resource = kAbsent;
    int base = kAbsent;
  };

  explicit NodeResourceTable(const std::vector<NodeState>& nodes);

  // The id of `resource` (a key of some node's devices, used or sharedReplicas), else kAbsent.
  int id(std::string_view resource) const;
  // id(resource) and id(unsharedResourceName(resource)).
  Key key(std::string_view resource) const;

  std::int64_t devices(std::size_t node, int id) const { return at(devices_, node, id, 0); }
  std::int64_t used(std::size_t node, int id) const { return at(used_, node, id, 0); }
  int replicas(std::size_t node, int id) const { return at(replicas_, node, id, 1); }
  // NodeState::capacityFor: devices of the base resource x its sharing replicas.
  std::int64_t capacity(std::size_t node, const Key& k) const {
    return devices(node, k.base) * replicas(node, k.base);
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  template <typename T>
  T at(const std::vector<T>& rows, std::size_t node, int id, std::type_identity_t<T> absent) const {
    return id == kAbsent ? absent : rows[node * width_ + static_cast<std::size_t>(id)];
  }

  std::unordered_map<std::string, int, Hash, std::equal_to<>> ids_;
  std::size_t width_ = 0;  // ids
  std::vector<std::int64_t> devices_, used_;
  std::vector<int> replicas_;
};

}  // namespace gpuscale::partition::detail
