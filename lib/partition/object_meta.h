// Reading the metadata of a Kubernetes object inside a reader of kube_objects.h (private to
// lib/partition): throws fields::FieldError like the field reader it is built on.
#pragma once

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

}  // namespace gpuscale::partition::detail
