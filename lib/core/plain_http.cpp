#include "gpuscale/core/plain_http.h"

#include <charconv>

namespace gpuscale::core {

std::optional<std::pair<std::string, std::uint16_t>> parseHostPort(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  unsigned port = 0;
  std::string_view digits = text.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || port > 65535) {
    return std::nullopt;
  }
  std::string_view host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::pair{std::string(host), static_cast<std::uint16_t>(port)};
}

}  // namespace gpuscale::core
