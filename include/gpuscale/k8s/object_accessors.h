// Reading the metadata every Kubernetes object has, from its JSON (kube::Object is nlohmann::json):
// labels, annotations, name and namespace, and single fields of any JSON object a server sent.
// Missing sections, missing keys and values of the wrong type all read as "" (or the given
// fallback): an object the API server sent may omit empty maps, and a malformed answer must never
// throw.
//
// Thread safety: pure functions.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gpuscale::k8s {

// metadata.labels[key], or "".
std::string labelOf(const nlohmann::json& object, std::string_view key);
// metadata.annotations[key], or "".
std::string annotationOf(const nlohmann::json& object, std::string_view key);
// metadata.name, or "".
std::string nameOf(const nlohmann::json& object);
// metadata.namespace, or "" (cluster-scoped objects).
std::string namespaceOf(const nlohmann::json& object);

// object[key] when `object` is a JSON object and that value a string, else "".
std::string stringField(const nlohmann::json& object, std::string_view key);
// object[key] when it is a boolean, else `fallback`.
bool boolField(const nlohmann::json& object, std::string_view key, bool fallback);
// object[key] when it is an integer within int's range, else `fallback`.
int intField(const nlohmann::json& object, std::string_view key, int fallback);
// object[key] when it is a JSON object, else an empty object (a reference to a static one).
const nlohmann::json& objectField(const nlohmann::json& object, std::string_view key);

// The value at `path` (keys of nested objects, e.g. {"spec", "mig", "strategy"}), or null (a
// reference to a static one) when a key is absent or a step is not an object.
const nlohmann::json& fieldAt(const nlohmann::json& object,
                              std::initializer_list<std::string_view> path);
// The string at `path`, or "" when it is absent or not a string.
std::string stringAt(const nlohmann::json& object, std::initializer_list<std::string_view> path);

}  // namespace gpuscale::k8s
