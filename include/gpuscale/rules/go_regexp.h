// Go `regexp` behaviour on top of RE2: compiling a rule regex with Go's syntax options, unanchored
// matching (`MatchString`), and `Regexp.ExpandString` for `name.as`, including its traps:
//   `$1_per_second` means the group named "1_per_second" (names are greedy [A-Za-z0-9_]+), which
//   does not exist, so it expands to ""; `${1}_per_second` is what people mean; `$$` is "$"; a `$`
//   that does not start a valid reference (`$-x`, a trailing `$`, `${1`) is copied literally; `$3`
//   past the last group is "".
// Difference from Go: a non-ASCII character counts as a name character (Go uses
// unicode.IsLetter/IsDigit); rule names are ASCII in practice.
//
// Thread safety: GoRegex is immutable after compile() and safe to use from several threads (RE2
// is).
#pragma once

#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"

namespace gpuscale::rules {

class GoRegex {
 public:
  // Compiles `pattern` as Go's regexp.Compile would (RE2 syntax, Perl classes, UTF-8,
  // leftmost-first). Errors are Status::invalid with RE2's explanation.
  static core::Result<GoRegex> compile(std::string_view pattern);

  // regexp.MatchString: true if the pattern matches anywhere in `text`.
  bool matches(std::string_view text) const;

  // Number of capture groups, not counting group 0 (len(SubexpNames()) - 1).
  int captureGroups() const;

  // re.ExpandString(nil, tmpl, text, re.FindStringSubmatchIndex(text)). Returns false when the
  // pattern does not match `text` (Go returns a nil match then).
  bool expand(std::string_view tmpl, std::string_view text, std::string& out) const;

  // The index of the group called `name`, or -1.
  int groupIndex(std::string_view name) const;

  const std::string& pattern() const { return pattern_; }
  const RE2& re2() const { return *re_; }

 private:
  std::string pattern_;
  std::shared_ptr<const RE2> re_;
};

// One `$` reference in an expand template, as Go's regexp.Expand reads it.
struct ExpandReference {
  size_t offset = 0;  // of the '$'
  std::string text;   // as written: "$1_per_second", "${1}"
  std::string name;   // "1_per_second", "1"
  int number = -1;    // the group number when the name is a number Go accepts, else -1
  bool braced = false;
};

// Every reference in `tmpl` (not `$$` and not malformed `$`s, which are literal).
std::vector<ExpandReference> parseExpandReferences(std::string_view tmpl);

}  // namespace gpuscale::rules
