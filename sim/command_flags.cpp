#include "command_flags.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "gpuscale/core/flag_args.h"

namespace gpuscale::sim {

std::optional<CommandFlags> CommandFlags::parse(std::span<const std::string_view> args,
                                                std::span<const std::string_view> known,
                                                std::ostream& err) {
  CommandFlags flags;
  core::FlagCallbacks callbacks;
  callbacks.apply = [&](std::string_view name, std::string_view value) -> core::Result<bool> {
    const std::string flag = "--" + std::string(name);
    if (std::find(known.begin(), known.end(), flag) == known.end()) return false;
    flags.values_[flag] = std::string(value);
    return true;
  };
  auto rest = core::applyFlags({args.begin(), args.end()}, callbacks);
  if (!rest) {
    err << rest.status().message() << "\n";
    return std::nullopt;
  }
  if (!rest->empty()) {
    err << "unknown flag: " << rest->front().substr(0, rest->front().find('=')) << "\n";
    return std::nullopt;
  }
  return flags;
}

std::string CommandFlags::get(std::string_view name, std::string fallback) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? fallback : it->second;
}

void writePortFile(const std::string& path, unsigned short port) {
  if (path.empty()) return;
  std::ofstream(path + ".tmp") << port << "\n";
  std::rename((path + ".tmp").c_str(), path.c_str());
}

}  // namespace gpuscale::sim
