#include <fmt/format.h>

#include "gpuscale/rules/config.h"

namespace gpuscale::rules {

std::string Diagnostic::format(const std::string& file) const {
  std::string out = file;
  if (pos.line > 0) out += fmt::format(":{}:{}", pos.line, pos.column);
  out += ": ";
  if (!path.empty()) out += path + ": ";
  out += message;
  return out;
}

}  // namespace gpuscale::rules
