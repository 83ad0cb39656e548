#include "gpuscale/apiserver/url.h"

#include "gpuscale/core/percent_encoding.h"

namespace gpuscale::apiserver {
core::Result<std::string> decodePath(std::string_view path) {
  auto decoded = core::percentDecode(path, false);
  if (!decoded) return core::Status::badRequest("invalid URL escape in path");
  return std::move(*decoded);
}

QueryParams QueryParams::parse(std::string_view rawQuery) {
  QueryParams params;
  while (!rawQuery.empty()) {
    const size_t amp = rawQuery.find('&');
    std::string_view pair = rawQuery.substr(0, amp);
    rawQuery = amp == std::string_view::npos ? std::string_view() : rawQuery.substr(amp + 1);
    // Go 1.17+ rejects pairs containing ';' and skips empty ones.
    if (pair.empty() || pair.find(';') != std::string_view::npos) continue;
    const size_t eq = pair.find('=');
    auto key = core::percentDecode(pair.substr(0, eq), true);
    auto value = core::percentDecode(
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
    if (!key || !value) continue;
    params.pairs_.emplace_back(std::move(*key), std::move(*value));
  }
  return params;
}

std::optional<std::string> QueryParams::get(std::string_view key) const {
  for (const auto& [k, v] : pairs_) {
    if (k == key) return v;
  }
  return std::nullopt;
}

bool QueryParams::has(std::string_view key) const { return get(key).has_value(); }

}  // namespace gpuscale::apiserver
