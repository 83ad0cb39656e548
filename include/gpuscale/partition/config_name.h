// Names of the MIG (mig-parted) and device-plugin configs gpuscale writes for a node. The name is
// both a key in a shared ConfigMap and the value of the node label that selects it
// (nvidia.com/mig.config, nvidia.com/device-plugin.config), so it must be a valid label value:
// at most 63 characters, [A-Za-z0-9._-], alphanumeric at both ends.
//
//   gpuscale-<node name, at most 36 characters>-<hash of the full node name>_<hash of the content>
//
// The node hash makes names unique per node whatever its length: two nodes whose names share the
// first 36 characters still get different names. Everything before the '_' is the node's owner
// key; the '_' cannot occur in a node name, so an owned name cannot be mistaken for a name built
// from another node's name. isOwnedConfigOf() tells exactly which names a node owns, so pruning a
// node's stale entries never touches another node's.
//
// Names written before the node hash existed ("gpuscale-<node, cut at 45>-<content hash>") are
// recognized as the node's only when the node name is shorter than 45 characters (not cut, so
// unambiguous); those of longer names are left in place rather than risk another node's entry.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuscale::partition {

// Longest label value Kubernetes accepts.
inline constexpr std::size_t kMaxConfigNameChars = 63;

// FNV-1a, 32 bits: a short, stable hash (the same in every build and process).
std::uint32_t stableHash(std::string_view text);

// The config name for `node` whose content is `content` (any canonical text of the config).
std::string ownedConfigName(std::string_view node, std::string_view content);

// True when `configName` is a name ownedConfigName(node, ...) can produce (for any content), or a
// recognized older name of this node (see above).
bool isOwnedConfigOf(std::string_view configName, std::string_view node);

}  // namespace gpuscale::partition
