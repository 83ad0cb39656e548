#include "gpuscale/apiserver/http_message.h"

#include <strings.h>

namespace gpuscale::apiserver {
namespace {

bool sameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::optional<std::string_view> HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (sameName(key, name)) return std::string_view(value);
  }
  return std::nullopt;
}

std::vector<std::string_view> HttpRequest::headerValues(std::string_view name) const {
  std::vector<std::string_view> values;
  for (const auto& [key, value] : headers) {
    if (sameName(key, name)) values.emplace_back(value);
  }
  return values;
}

}  // namespace gpuscale::apiserver
