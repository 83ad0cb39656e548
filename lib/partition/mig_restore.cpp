#include "gpuscale/partition/mig_restore.h"

#include <nlohmann/json.hpp>

namespace gpuscale::partition {

std::optional<MigRestore> decodeMigRestore(std::string_view annotation) {
  if (annotation.empty()) return std::nullopt;
  auto j = nlohmann::json::parse(annotation, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const auto before = j.find("before");
  const auto applied = j.find("applied");
  if (before == j.end() || applied == j.end() || !before->is_string() || !applied->is_string())
    return std::nullopt;
  MigRestore out{before->get<std::string>(), applied->get<std::string>()};
  if (out.before.empty() || out.applied.empty()) return std::nullopt;
  return out;
}

std::string encodeMigRestore(const MigRestore& restore) {
  return nlohmann::json{{"before", restore.before}, {"applied", restore.applied}}.dump();
}

std::optional<MigRestore> nextMigRestore(const std::optional<MigRestore>& current,
                                         const std::string& previous, const std::string& applied) {
  if (current && current->applied == previous) return MigRestore{current->before, applied};
  if (previous.empty()) return std::nullopt;
  return MigRestore{previous, applied};
}

}  // namespace gpuscale::partition
