// Percent-encoding pieces shared by the API server (request paths and queries), the delegated
// authenticator (front-proxy extra headers) and the Prometheus client's request signing.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuscale::core {

// The value of a hexadecimal digit, -1 for any other character.
int hexDigitValue(char c);

// Decodes %XX escapes, and '+' as a space when `plusIsSpace` (form and query encoding). nullopt on
// a malformed escape (a '%' not followed by two hexadecimal digits).
std::optional<std::string> percentDecode(std::string_view text, bool plusIsSpace);

// Lower-case hexadecimal of every byte of `bytes` (digests, signatures).
std::string hexLower(std::string_view bytes);

}  // namespace gpuscale::core
