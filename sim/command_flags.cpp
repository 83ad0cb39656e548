#include "command_flags.h"

#include <algorithm>
#include <charconv>

namespace gpuscale::sim {

std::optional<CommandFlags> CommandFlags::parse(std::span<const std::string_view> args,
                                                std::span<const std::string_view> known,
                                                std::ostream& err) {
  CommandFlags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    const auto eq = arg.find('=');
    std::string_view name = arg.substr(0, eq);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      err << "unknown flag: " << name << "\n";
      return std::nullopt;
    }
    std::string_view value;
    if (eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      err << "flag needs an argument: " << arg << "\n";
      return std::nullopt;
    }
    flags.values_[std::string(name)] = std::string(value);
  }
  return flags;
}

std::string CommandFlags::get(std::string_view name, std::string fallback) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? fallback : it->second;
}

std::optional<std::pair<std::string, unsigned short>> parseHostPort(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  unsigned port = 0;
  std::string_view digits = text.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || port > 65535)
    return std::nullopt;
  return std::pair{std::string(text.substr(0, colon)), static_cast<unsigned short>(port)};
}

}  // namespace gpuscale::sim
