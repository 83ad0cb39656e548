// CommandFlags: `--name value` / `--name=value` flags of a gpuscale-sim mode (split by
// core::applyFlags), checked against the names the mode knows. Boolean flags are not supported
// (every flag takes a value).
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace gpuscale::sim {

class CommandFlags {
 public:
  // Parses `args`; on an unknown flag or a missing value writes the error to `err` and returns
  // nullopt.
  static std::optional<CommandFlags> parse(std::span<const std::string_view> args,
                                           std::span<const std::string_view> known,
                                           std::ostream& err);
  std::string get(std::string_view name, std::string fallback = {}) const;
  bool has(std::string_view name) const { return values_.contains(std::string(name)); }

 private:
  std::map<std::string, std::string> values_;
};

// Writes `port` to `path` (through a temporary file and a rename, so a reader never sees half a
// number); nothing when `path` is empty.
void writePortFile(const std::string& path, unsigned short port);

}  // namespace gpuscale::sim
