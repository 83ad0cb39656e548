// The `<< >>` template engine: the subset of Go text/template that prometheus-adapter rule files
// use, with
// `<<` and `>>` as delimiters, for `metricsQuery`, `containerQuery`/`nodeQuery` and
// `resources.template`.
//
// Supported (same output as Go):
//   - literal text;
//   - `<<.Field>>`, `<<.Map.key>>` (a missing key prints "<no value>"), `<<.>>`;
//   - `<<index .Map "key">>` (a missing key gives ""), `<<index .Slice 0>>`, `<<len .X>>`;
//   - string literals ("…" with Go escapes, `raw`) and integer literals as arguments or values;
//   - whitespace trim markers `<<- ` and ` ->>`; comments `<</* … */>>`.
// Printing follows Go's fmt: a []string prints as `[a b]`, a map[string]string as `map[k:v]`
// (sorted keys). Everything else (if/range/with/define/template, pipelines `|`, variables,
// parentheses, other functions) is rejected when parsing with a message that says what is not
// supported, as is an unclosed action or comment. Unknown fields are found when executing (as in
// Go); fieldReferences() lets callers check them earlier against the fields they will supply.
//
// Thread safety: a parsed Template is immutable; execute() may be called concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "gpuscale/core/result.h"

namespace gpuscale::rules {

using core::Result;
using core::Status;

using StringMap = std::map<std::string, std::string, std::less<>>;
using TemplateValue = std::variant<std::string, std::vector<std::string>, StringMap>;

// The data a template runs against: a Go struct with named fields. The pointers must stay valid
// during execute().
struct TemplateData {
  std::string_view typeName;  // as Go names the type in errors, e.g. "naming.queryTemplateArgs"
  std::vector<std::pair<std::string_view, const TemplateValue*>> fields;

  const TemplateValue* field(std::string_view name) const;
};

namespace template_detail {
struct Node;
}

class Template {
 public:
  // A top-level field the template reads (`.Series` in `<<.Series>>` or `<<index .Series 0>>`), and
  // where.
  struct FieldRef {
    std::string name;
    size_t offset = 0;
  };

  // An empty template that renders "".
  Template();
  ~Template();
  Template(const Template&);
  Template& operator=(const Template&);
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  // Parses `text`. On failure returns Status::invalid("template: …") and, if `errorOffset` is
  // given, stores the byte offset in `text` where the problem is.
  static Result<Template> parse(std::string_view text, size_t* errorOffset = nullptr);

  // Runs the template. Errors (unknown field, bad index) are Status::invalid values naming the
  // action.
  Result<std::string> execute(const TemplateData& data) const;

  const std::string& text() const { return text_; }
  const std::vector<FieldRef>& fieldReferences() const { return fieldRefs_; }
  bool referencesField(std::string_view name) const;

 private:
  std::string text_;
  std::vector<template_detail::Node> nodes_;
  std::vector<FieldRef> fieldRefs_;
};

// Go's fmt printing of a []string: "[a b c]".
std::string formatGoStringSlice(const std::vector<std::string>& values);

}  // namespace gpuscale::rules
