// Go's `strconv.Quote` (what `fmt.Sprintf("%q", s)` prints for a string), used wherever
// prometheus-adapter formats label values into PromQL: `label="value"`. Quoting is what stops
// object names and selector values from injecting PromQL, so it must be exact: `"` and `\` are
// backslash-escaped; \a \b \f \n \r \t \v use their short escapes; other control characters and DEL
// become \xNN; invalid UTF-8 bytes become \xNN; non-printable runes become \uXXXX or \UXXXXXXXX;
// printable non-ASCII runes are kept as they are.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>

namespace gpuscale::core {

// The Go-quoted form of `text`, including the surrounding double quotes.
std::string goQuote(std::string_view text);

// Go's utf8.ValidString: well-formed UTF-8 (no overlong forms, no surrogates, nothing above
// U+10FFFF). Prometheus label values, and so every string a query must match, are valid UTF-8.
bool isValidUtf8(std::string_view text);

// Escapes regular-expression metacharacters as Go's regexp.QuoteMeta does (for building `=~`
// alternations whose parts must match literally).
std::string regexQuoteMeta(std::string_view text);

}  // namespace gpuscale::core
