// Reading the metadata every Kubernetes object has, from its JSON (kube::Object is nlohmann::json):
// labels, annotations, name and namespace. Missing sections, missing keys and values of the wrong
// type all read as "" (an object the API server sent may omit empty maps).
//
// Thread safety: pure functions.
#pragma once

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

}  // namespace gpuscale::k8s
