// URL pieces as Go's net/url sees them: percent-decoding of paths and parsing of query strings.
//
// Kubernetes reads `req.URL.Path` (decoded, so "/pods/%2A/m" routes like "/pods/*/m") and
// `req.URL.Query()` (form decoding: "+" is a space; malformed pairs are dropped silently, as
// Query() drops them).
//
// Thread safety: pure functions and immutable values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscale/core/result.h"

namespace gpuscale::apiserver {

// Decodes %XX escapes in a path ("+" stays "+"). A malformed escape is a BadRequest error.
core::Result<std::string> decodePath(std::string_view path);

// Parsed query parameters in their original order.
class QueryParams {
 public:
  QueryParams() = default;
  // Splits on '&' and ';'-free pairs; decodes keys and values ("+" -> " ", %XX). Bad pairs are
  // skipped.
  static QueryParams parse(std::string_view rawQuery);

  // The first value of `key`, if the key is present (possibly with an empty value).
  std::optional<std::string> get(std::string_view key) const;
  bool has(std::string_view key) const;
  const std::vector<std::pair<std::string, std::string>>& pairs() const { return pairs_; }

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
};

}  // namespace gpuscale::apiserver
