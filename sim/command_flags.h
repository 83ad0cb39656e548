// CommandFlags: `--name value` / `--name=value` flags of a gpuscale-sim mode, checked against the
// names the mode knows. Boolean flags are not supported (every flag takes a value).
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

// Splits "HOST:PORT"; nullopt when malformed.
std::optional<std::pair<std::string, unsigned short>> parseHostPort(std::string_view text);

}  // namespace gpuscale::sim
