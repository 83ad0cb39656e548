#include "gpuscale/apiserver/url.h"

namespace gpuscale::apiserver {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes %XX (and "+" as space when `plusIsSpace`); nullopt on a malformed escape.
std::optional<std::string> unescape(std::string_view text, bool plusIsSpace) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = hexValue(text[i + 1]);
      const int lo = hexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plusIsSpace) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

core::Result<std::string> decodePath(std::string_view path) {
  auto decoded = unescape(path, false);
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
    auto key = unescape(pair.substr(0, eq), true);
    auto value =
        unescape(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
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
