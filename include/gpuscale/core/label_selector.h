// Kubernetes label selectors: parsing, matching and validation, with the semantics of
// apimachinery's `labels.Parse` (the string form used by `?labelSelector=` and
// `?metricLabelSelector=`).
//
// Grammar: comma-separated requirements; each is `key`, `!key`, `key=value`, `key==value`,
// `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`, `key>N`, `key<N`. Whitespace around tokens
// is allowed. Keys must be qualified names (optional DNS-subdomain prefix + "/" + name of ≤63
// characters); values must be valid label values (empty, or ≤63 characters matching
// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`); `>`/`<` take an integer. After parsing, requirements
// are sorted by key (stable) and each requirement's values are sorted ascending and deduplicated,
// as labels.Parse returns them. The empty string is the selector that matches everything.
//
// Parse errors are Status::badRequest values that quote the offending text; nothing in here throws
// or aborts on any input (the parser is fuzzed: tests/fuzz/). Error messages are apimachinery's,
// word for word. One deliberate difference: apimachinery treats a NUL byte at the start of a token
// as the end of the input (so "\0x" would match everything); here NUL is an ordinary character,
// which key/value validation rejects.
//
// Thread safety: immutable value types.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"

namespace gpuscale::core {

using Labels = std::map<std::string, std::string, std::less<>>;

enum class SelectorOperator {
  kEquals,        // "="
  kDoubleEquals,  // "=="
  kNotEquals,     // "!="
  kIn,            // "in"
  kNotIn,         // "notin"
  kExists,        // "key"
  kDoesNotExist,  // "!key"
  kGreaterThan,   // "gt"
  kLessThan,      // "lt"
};

struct Requirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kExists;
  std::vector<std::string> values;  // sorted ascending, unique

  bool matches(const Labels& labels) const;
  // The same for a label set held in another container: `value` is the label's value, or null when
  // the label is absent.
  bool matchesValue(const std::string* value) const;
  // The requirement as labels.Requirement.String() prints it ("k in (a,b)", "!k", "k!=v").
  std::string toString() const;
};

class LabelSelector {
 public:
  // Matches everything.
  LabelSelector() = default;

  static Result<LabelSelector> parse(std::string_view text);

  bool matches(const Labels& labels) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }
  // Canonical string form (requirements joined by ","), as labels.Selector.String().
  std::string toString() const;

 private:
  explicit LabelSelector(std::vector<Requirement> requirements)
      : requirements_(std::move(requirements)) {}
  std::vector<Requirement> requirements_;
};

// Validation as apimachinery's validation.IsValidLabelValue / IsQualifiedName. On failure the
// returned string explains why; empty means valid.
std::string labelValueError(std::string_view value);
std::string labelKeyError(std::string_view key);
inline bool isValidLabelValue(std::string_view value) { return labelValueError(value).empty(); }
inline bool isValidLabelKey(std::string_view key) { return labelKeyError(key).empty(); }
// An RFC 1123 label as Kubernetes names namespaces (validation.IsDNS1123Label): at most 63 lower
// case alphanumerics or '-', starting and ending with an alphanumeric.
bool isDns1123Label(std::string_view name);

}  // namespace gpuscale::core
