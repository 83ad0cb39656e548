// Typed, shape-checked access to the fields of a JSON object: the one primitive every reader of a
// Kubernetes object (kube_objects.h) and of the reconciler's own annotations is built on, so no
// other code indexes JSON to read it.
//
// Absent or null fields give the fallback; a present field of the wrong type (or a number out of
// the asked range) throws FieldError naming the field. readFields() runs a reader and turns a
// FieldError (or any nlohmann::json exception) into a Status, so no exception leaves a reader:
// 422 with reason kShapeReason for a field of the wrong type or form, kRangeReason for a number
// beyond what the reader models.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/core/result.h"

namespace gpuscale::partition::fields {

using nlohmann::json;

inline constexpr std::string_view kShapeReason = "Invalid";
inline constexpr std::string_view kRangeReason = "OutOfRange";

enum class Problem { kShape, kRange };

struct FieldError {
  std::string message;
  Problem problem = Problem::kShape;
};

[[noreturn]] inline void fail(std::string_view key, std::string_view expected,
                              Problem problem = Problem::kShape) {
  throw FieldError{std::string(key) + " must be " + std::string(expected), problem};
}

// The member `key` of `obj`, or nullptr when absent, null, or `obj` is not an object.
inline const json* find(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// obj[key] when it has JSON type `Type`, an empty one of that type when absent.
template <json::value_t Type>
const json& member(const json& obj, std::string_view key, std::string_view expected) {
  static const json kEmpty(Type);
  const json* v = find(obj, key);
  if (v == nullptr) return kEmpty;
  if (v->type() != Type) fail(key, expected);
  return *v;
}

inline const json& object(const json& obj, std::string_view key) {
  return member<json::value_t::object>(obj, key, "an object");
}

inline const json& array(const json& obj, std::string_view key) {
  return member<json::value_t::array>(obj, key, "a list");
}

inline std::string string(const json& obj, std::string_view key, std::string fallback = {}) {
  const json* v = find(obj, key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) fail(key, "a string");
  return v->get<std::string>();
}

inline bool boolean(const json& obj, std::string_view key, bool fallback = false) {
  const json* v = find(obj, key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) fail(key, "a boolean");
  return v->get<bool>();
}

// `v` as an integer within [min, max] (a float, or an unsigned value beyond int64, is not one);
// `what` names it in the error.
inline std::int64_t integerValue(const json& v, std::string_view what,
                                 std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                                 std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  constexpr auto kInt64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (!v.is_number_integer()) fail(what, "an integer");
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > kInt64Max)
    fail(what, "an integer below 2^63", Problem::kRange);
  const std::int64_t n = v.get<std::int64_t>();
  if (n < min || n > max)
    fail(what, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]",
         Problem::kRange);
  return n;
}

// obj[key] as integerValue(); `fallback` when absent.
inline std::int64_t integer(const json& obj, std::string_view key, std::int64_t fallback = 0,
                            std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                            std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  const json* v = find(obj, key);
  return v == nullptr ? fallback : integerValue(*v, key, min, max);
}

// A Kubernetes int32 field (replicas, priorities).
inline int int32(const json& obj, std::string_view key, int fallback = 0,
                 int min = std::numeric_limits<int>::min()) {
  return static_cast<int>(
      integer(obj, key, fallback, min, std::numeric_limits<std::int32_t>::max()));
}

inline std::map<std::string, std::string> stringMap(const json& obj, std::string_view key) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : object(obj, key).items()) {
    if (!v.is_string()) fail(std::string(key) + "." + k, "a string");
    out.emplace(k, v.get<std::string>());
  }
  return out;
}

inline std::vector<std::string> strings(const json& obj, std::string_view key) {
  std::vector<std::string> out;
  for (const auto& v : array(obj, key)) {
    if (!v.is_string()) fail(key, "a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

// A quantity that Kubernetes serialises as a string ("7", "399300m") or, in hand-written dumps, a
// number; "" when absent.
inline std::string quantityText(const json& obj, std::string_view key) {
  const json* v = find(obj, key);
  if (v == nullptr) return {};
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number()) return v->dump();
  fail(key, "a quantity");
}

// Runs `read` (which may throw FieldError or a json exception) and returns its value, or
// Status::invalid with the message prefixed by `what`.
template <typename Read>
auto readFields(std::string_view what, Read&& read) -> core::Result<decltype(read())> {
  try {
    return read();
  } catch (const FieldError& e) {
    return core::Status(422,
                        std::string(e.problem == Problem::kRange ? kRangeReason : kShapeReason),
                        std::string(what) + e.message);
  } catch (const json::exception& e) {
    return core::Status::invalid(std::string(what) + e.what());
  }
}

}  // namespace gpuscale::partition::fields
