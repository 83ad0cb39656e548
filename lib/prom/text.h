// Small text helpers shared by the prom sources (private to lib/prom).
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

namespace gpuscale::prom {

// `text` without leading and trailing spaces, tabs and line breaks.
inline std::string_view trimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace gpuscale::prom
