#include "gpuscale/k8s/object_accessors.h"

#include <cstdint>
#include <limits>

namespace gpuscale::k8s {
namespace {

const nlohmann::json* metadataOf(const nlohmann::json& object) {
  if (!object.is_object()) return nullptr;
  auto meta = object.find("metadata");
  return meta != object.end() && meta->is_object() ? &*meta : nullptr;
}

std::string stringIn(const nlohmann::json* map, std::string_view key) {
  if (map == nullptr || !map->is_object()) return {};
  auto it = map->find(key);
  return it != map->end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string metadataMapEntry(const nlohmann::json& object, std::string_view section,
                             std::string_view key) {
  const nlohmann::json* meta = metadataOf(object);
  if (meta == nullptr) return {};
  auto map = meta->find(section);
  return map != meta->end() ? stringIn(&*map, key) : std::string();
}

}  // namespace

std::string labelOf(const nlohmann::json& object, std::string_view key) {
  return metadataMapEntry(object, "labels", key);
}

std::string annotationOf(const nlohmann::json& object, std::string_view key) {
  return metadataMapEntry(object, "annotations", key);
}

std::string nameOf(const nlohmann::json& object) { return stringIn(metadataOf(object), "name"); }

std::string namespaceOf(const nlohmann::json& object) {
  return stringIn(metadataOf(object), "namespace");
}

std::string stringField(const nlohmann::json& object, std::string_view key) {
  return stringIn(&object, key);
}

bool boolField(const nlohmann::json& object, std::string_view key, bool fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

int intField(const nlohmann::json& object, std::string_view key, int fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    return value <= static_cast<std::uint64_t>(std::numeric_limits<int>::max())
               ? static_cast<int>(value)
               : fallback;
  }
  if (it->is_number_integer()) {
    const auto value = it->get<std::int64_t>();
    return value >= std::numeric_limits<int>::min() && value <= std::numeric_limits<int>::max()
               ? static_cast<int>(value)
               : fallback;
  }
  return fallback;
}

const nlohmann::json& objectField(const nlohmann::json& object, std::string_view key) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!object.is_object()) return empty;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : empty;
}

const nlohmann::json& fieldAt(const nlohmann::json& object,
                              std::initializer_list<std::string_view> path) {
  static const nlohmann::json absent;
  const nlohmann::json* at = &object;
  for (std::string_view key : path) {
    if (!at->is_object()) return absent;
    auto it = at->find(key);
    if (it == at->end()) return absent;
    at = &*it;
  }
  return *at;
}

std::string stringAt(const nlohmann::json& object, std::initializer_list<std::string_view> path) {
  const nlohmann::json& at = fieldAt(object, path);
  return at.is_string() ? at.get<std::string>() : std::string();
}

}  // namespace gpuscale::k8s
