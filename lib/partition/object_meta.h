// Pieces of the readers of kube_objects.h (private to lib/partition): they throw
// fields::FieldError like the field reader they are built on.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuscale/partition/kube_objects.h"

namespace gpuscale::partition::detail {

ObjectMeta parseMeta(const nlohmann::json& object);

// An object's metadata (its namespace "default" when it has none, as in a hand-written dump), spec
// and status.
struct ObjectParts {
  ObjectMeta meta;
  const nlohmann::json& spec;
  const nlohmann::json& status;
};
ObjectParts parseParts(const nlohmann::json& object);

// Copies `meta`'s identity into a typed object: namespace and name, and its uid, labels and
// annotations where `T` keeps them.
template <typename T>
void copyIdentity(const ObjectMeta& meta, T& out) {
  out.ns = meta.ns;
  out.name = meta.name;
  if constexpr (requires { out.uid; }) out.uid = meta.uid;
  if constexpr (requires { out.labels; }) out.labels = meta.labels;
  if constexpr (requires { out.annotations; }) out.annotations = meta.annotations;
}

// The GPU requests, nodeSelector and GPU memory need of a pod spec (a template's or a pod's, with
// its metadata's annotations) into `target` (pod_parse.cpp).
void readTemplate(const nlohmann::json& podSpec, const Labels& annotations, ScaleTarget& target);

// An nvidia.com/ count (allocatable, a request or a limit): map[key] as a quantity rounded up,
// non-negative and at most kMaxDeviceCount (beyond: a Problem::kRange error); `path` names it.
inline constexpr std::int64_t kMaxDeviceCount = std::int64_t{1} << 31;
std::int64_t deviceCount(const nlohmann::json& map, const std::string& key,
                         const std::string& path);

}  // namespace gpuscale::partition::detail
