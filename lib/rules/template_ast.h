// The parsed form of a `<< >>` template, shared by the parser (template.cpp) and the executor
// (template_execute.cpp). Private to lib/rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuscale::rules::template_detail {

// An operand: a field chain (`.A.b`; empty chain = `.`), a string literal or an integer literal.
struct Arg {
  enum class Kind { kField, kString, kInt };
  Kind kind = Kind::kField;
  std::vector<std::string> chain;
  std::string text;
  int64_t number = 0;
  size_t offset = 0;
  std::string source;  // as written, for error messages
};

// A text node, or an action that prints one operand or the result of one function call.
struct Node {
  bool isText = true;
  std::string text;
  std::string function;  // empty: print args[0]
  std::vector<Arg> args;
  size_t offset = 0;
  std::string source;
};

}  // namespace gpuscale::rules::template_detail
