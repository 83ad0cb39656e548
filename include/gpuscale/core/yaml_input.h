// Reading YAML input files (policies, device-plugin and mig-parted configs, scenarios): yaml-cpp's
// exceptions and nodes turned into Status errors with "line L, column C: " positions, one way for
// every module. A parser throws YamlInputError (yamlFail) or lets YAML::Exception out, and its
// boundary (guardYaml) turns either into a Status::invalid; nothing escapes the boundary.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "gpuscale/core/result.h"
#include "gpuscale/core/status.h"

namespace gpuscale::core {

// Thrown inside parsers and caught at their boundary (guardYaml).
struct YamlInputError {
  Status status;
};

inline std::string yamlPosition(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return "";
  return fmt::format("line {}, column {}: ", mark.line + 1, mark.column + 1);
}

[[noreturn]] inline void yamlFail(const YAML::Node& node, std::string_view message) {
  throw YamlInputError{Status::invalid(yamlPosition(node) + std::string(message))};
}

// Runs `parse` (which may throw YAML::Exception or YamlInputError) and returns its result or the
// error.
template <typename T, typename Parse>
Result<T> guardYaml(std::string_view what, Parse&& parse) {
  try {
    return parse();
  } catch (const YamlInputError& e) {
    return e.status.withContext(what);
  } catch (const YAML::Exception& e) {
    return Status::invalid(
        fmt::format("{}: line {}, column {}: {}", what, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

template <typename T>
T yamlAs(const YAML::Node& node, std::string_view field) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    yamlFail(node, fmt::format("field \"{}\" has the wrong type", field));
  }
}

}  // namespace gpuscale::core
