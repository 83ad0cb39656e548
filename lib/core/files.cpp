#include "gpuscale/core/files.h"

#include <fstream>
#include <sstream>

namespace gpuscale::core {

Result<std::string> readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const auto unreadable = [&] {
    return Status::invalid("cannot read " + path.string()).withPayload(FileFailure::kUnreadable);
  };
  if (!in) return unreadable();
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return unreadable();
  return content.str();
}

std::string_view trimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace gpuscale::core
