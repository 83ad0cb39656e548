#include "gpuscale/partition/config_name.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpuscale/core/fnv1a.h"
#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {
namespace {

constexpr std::size_t kHashChars = 8;
// "gpuscale-" + node + "-" + node hash + "_" + content hash fills a label value.
constexpr std::size_t kMaxNodeChars =
    kMaxConfigNameChars - kOwnedConfigPrefix.size() - 2 * (kHashChars + 1);
// How the names were cut before they carried a node hash.
constexpr std::size_t kLegacyNodeChars = 45;

bool isHash(std::string_view text) {
  return text.size() == kHashChars && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// "gpuscale-<node prefix>-<node hash>": the part of every name `node` owns before the '_'.
std::string ownerKey(std::string_view node) {
  return fmt::format("{}{}-{:08x}", kOwnedConfigPrefix, node.substr(0, kMaxNodeChars),
                     stableHash(node));
}

// Splits "<head><separator><8 hex>" into head; false when `name` is not of that form.
bool splitHashSuffix(std::string_view name, char separator, std::string_view& head) {
  if (name.size() < kHashChars + 1) return false;
  const std::size_t at = name.size() - kHashChars - 1;
  if (name[at] != separator || !isHash(name.substr(at + 1))) return false;
  head = name.substr(0, at);
  return true;
}

}  // namespace

std::uint32_t stableHash(std::string_view text) { return core::fnv1a32(text); }

std::string ownedConfigName(std::string_view node, std::string_view content) {
  return fmt::format("{}_{:08x}", ownerKey(node), stableHash(content));
}

bool isOwnedConfigOf(std::string_view configName, std::string_view node) {
  std::string_view head;
  if (splitHashSuffix(configName, '_', head)) return head == ownerKey(node);
  if (node.size() >= kLegacyNodeChars || !splitHashSuffix(configName, '-', head)) return false;
  return head.size() == kOwnedConfigPrefix.size() + node.size() &&
         head.substr(0, kOwnedConfigPrefix.size()) == kOwnedConfigPrefix &&
         head.substr(kOwnedConfigPrefix.size()) == node;
}

}  // namespace gpuscale::partition
