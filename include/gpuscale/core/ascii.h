// Character classes of ASCII text, independent of the C locale (unlike <cctype>, whose answers
// depend on it and which is undefined for negative `char` values): for the grammars of
// Kubernetes quantities, durations, label values and rule files, which are ASCII by definition.
//
// Thread safety: pure functions.
#pragma once

namespace gpuscale::core {

constexpr bool isAsciiDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool isAsciiLower(char c) { return c >= 'a' && c <= 'z'; }
constexpr bool isAsciiUpper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool isAsciiAlpha(char c) { return isAsciiLower(c) || isAsciiUpper(c); }
constexpr bool isAsciiAlnum(char c) { return isAsciiDigit(c) || isAsciiAlpha(c); }

}  // namespace gpuscale::core
