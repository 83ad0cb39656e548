// Typed, shape-checked access to Kubernetes JSON objects (private helper of the snapshot builder).
// Absent or null fields give defaults; present fields of the wrong type throw JsonShapeError, which the
// builder turns into a Status naming the item and field.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuscale::partition::json_fields {

using nlohmann::json;

struct JsonShapeError {
  std::string message;
};

[[noreturn]] inline void fail(std::string_view key, std::string_view expected) {
  throw JsonShapeError{std::string(key) + " must be " + std::string(expected)};
}

// The member `key` of `obj`, or nullptr when absent or null.
inline const json* find(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

inline const json& object(const json& obj, std::string_view key) {
  static const json kEmpty = json::object();
  const json* v = find(obj, key);
  if (v == nullptr) return kEmpty;
  if (!v->is_object()) fail(key, "an object");
  return *v;
}

inline const json& array(const json& obj, std::string_view key) {
  static const json kEmpty = json::array();
  const json* v = find(obj, key);
  if (v == nullptr) return kEmpty;
  if (!v->is_array()) fail(key, "a list");
  return *v;
}

inline std::string string(const json& obj, std::string_view key, std::string fallback = {}) {
  const json* v = find(obj, key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) fail(key, "a string");
  return v->get<std::string>();
}

inline std::int64_t integer(const json& obj, std::string_view key, std::int64_t fallback = 0) {
  const json* v = find(obj, key);
  if (v == nullptr) return fallback;
  if (!v->is_number_integer()) fail(key, "an integer");
  return v->get<std::int64_t>();
}

inline std::map<std::string, std::string> stringMap(const json& obj, std::string_view key) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : object(obj, key).items()) {
    if (!v.is_string()) fail(std::string(key) + "." + k, "a string");
    out.emplace(k, v.get<std::string>());
  }
  return out;
}

// A quantity that Kubernetes may serialise as a string ("7", "399300m") or, in hand-written dumps, a number.
inline std::string quantityText(const json& obj, std::string_view key) {
  const json* v = find(obj, key);
  if (v == nullptr) return {};
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number()) return v->dump();
  fail(key, "a quantity");
}

}  // namespace gpuscale::partition::json_fields
