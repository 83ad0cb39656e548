// Turns yaml-cpp exceptions and nodes into Status errors with line:column positions (private helper).
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "gpuscale/core/status.h"

namespace gpuscale::partition {

// Thrown inside parsers and caught at their boundary; never escapes the partition library.
struct YamlInputError {
  core::Status status;
};

inline std::string yamlPosition(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return "";
  return fmt::format("line {}, column {}: ", mark.line + 1, mark.column + 1);
}

[[noreturn]] inline void yamlFail(const YAML::Node& node, std::string_view message) {
  throw YamlInputError{core::Status::invalid(yamlPosition(node) + std::string(message))};
}

// Runs `parse` (which may throw YAML::Exception or YamlInputError) and returns its result or the error.
template <typename T, typename Parse>
core::Result<T> guardYaml(std::string_view what, Parse&& parse) {
  try {
    return parse();
  } catch (const YamlInputError& e) {
    return e.status.withContext(what);
  } catch (const YAML::Exception& e) {
    return core::Status::invalid(fmt::format("{}: line {}, column {}: {}", what, e.mark.line + 1,
                                             e.mark.column + 1, e.msg));
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

}  // namespace gpuscale::partition
