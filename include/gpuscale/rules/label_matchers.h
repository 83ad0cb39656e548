// `.LabelMatchers` and `.LabelValuesByName`: the PromQL label matchers a rule query is built from,
// in prometheus-adapter's order and quoting, and injection-proof.
//
// Order: the metricLabelSelector's requirements (as labels.Parse sorts them), then the namespace
// matcher, then the resource matcher; joined with "," (no spaces). Each matcher is
// `label<op>"value"` where the value is Go-%q-quoted (core::goQuote), so no object name or selector
// value can end the string.
//
// Selector requirement → matcher (prometheus-adapter's selectMatcher/selectTargetValue):
//   k=v, k==v → k="v"     k!=v → k!="v"     k in (v) → k=~"v"     k notin (v) → k!~"v"
//   ≥2 values: =, ==, in → k=~"a|b"; !=, notin → k!~"a|b"
//   k (exists) → k!=""    !k → k=""          k>n, k<n → error (unsupported operator)
// Resource matcher: one name → pod="a"; several → pod=~"a|b" (names in the order given).
//
// Deliberate difference from prometheus-adapter (documented in docs/rules.md): every value placed
// inside a regex matcher (=~, !~) is escaped with core::regexQuoteMeta, so `a.b` only matches "a.b"
// and a name containing `|`, `.*` or `)` cannot widen the match. prometheus-adapter joins raw
// values; for the names and label values Kubernetes allows, the only visible difference is `\\.`
// for a dot. `.LabelValuesByName` values are escaped the same way and are also safe to paste
// between double quotes in a template
// (`pod=~"<<index .LabelValuesByName "pod">>"`). Selector keys must be valid Prometheus label
// names.
//
// Thread safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/result.h"
#include "gpuscale/rules/template.h"

namespace gpuscale::rules {

enum class MatchOp { kEqual, kNotEqual, kRegexMatch, kRegexNoMatch };

// `label<op>"value"` with the value Go-quoted (the value is used as given: no regex escaping here).
std::string formatMatcher(std::string_view label, MatchOp op, std::string_view value);

// The values escaped with regexQuoteMeta and joined with '|' (a regex that matches exactly those
// strings).
std::string literalAlternation(std::span<const std::string> values);

// True for [a-zA-Z_][a-zA-Z0-9_]*.
bool isPrometheusLabelName(std::string_view name);

class LabelMatchers {
 public:
  // Appends one matcher per requirement of `selector`. An unsupported operator, a requirement
  // without the values its operator needs, or a key that is not a Prometheus label name is a
  // Status::badRequest naming the requirement; nothing is appended then.
  core::Status addSelector(const core::LabelSelector& selector);
  // label="value".
  void addEqual(std::string_view label, std::string_view value);
  // The resource matcher: label="name" for one name, label=~"a|b" for several. `names` must not be
  // empty.
  void addNames(std::string_view label, std::span<const std::string> names);
  // label!="" (any object); `.LabelValuesByName` gets ".+".
  void addAnyValue(std::string_view label);

  const std::vector<std::string>& matchers() const { return matchers_; }
  // label → values joined with '|' (regex-escaped, string-escaped), as `.LabelValuesByName`.
  const StringMap& valuesByName() const { return valuesByName_; }
  // The matchers joined with "," (`.LabelMatchers`).
  std::string joined() const;

 private:
  void add(std::string_view label, MatchOp op, std::string_view value,
           std::span<const std::string> values);

  std::vector<std::string> matchers_;
  StringMap valuesByName_;
};

}  // namespace gpuscale::rules
