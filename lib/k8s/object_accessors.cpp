#include "gpuscale/k8s/object_accessors.h"

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

}  // namespace gpuscale::k8s
