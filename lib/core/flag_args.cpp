#include "gpuscale/core/flag_args.h"

namespace gpuscale::core {

Result<std::vector<std::string>> applyFlags(const std::vector<std::string>& args,
                                            const FlagCallbacks& flags) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      rest.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const bool takesNext = eq == std::string::npos && !flags.isBoolean(name);
    const bool hasNext = i + 1 < args.size();
    const std::string value = eq != std::string::npos ? arg.substr(eq + 1)
                              : !takesNext            ? "true"
                              : hasNext               ? args[i + 1]
                                                      : "";
    Result<bool> applied = flags.apply(name, value);
    if (!applied) return applied.status();
    if (!*applied) {
      rest.push_back(arg);
      continue;
    }
    if (takesNext && !hasNext) return Status::badRequest("flag needs an argument: --" + name);
    if (flags.passOn(name)) {
      rest.push_back(arg);
      if (takesNext) rest.push_back(args[i + 1]);
    }
    if (takesNext) ++i;
  }
  return rest;
}

}  // namespace gpuscale::core
