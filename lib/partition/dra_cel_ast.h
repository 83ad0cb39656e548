// The syntax tree of the CEL subset of dra_cel.h (private to lib/partition): dra_cel_parse.cpp
// builds it, dra_cel.cpp evaluates it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"

namespace gpuscale::partition::cel {

enum class Op {
  kString,  // text
  kInt,     // number
  kBool,    // number != 0
  kNull,
  kList,    // args: the elements
  kIdent,   // text: the variable (only `device`)
  kSelect,  // args[0].text
  kIndex,   // args[0][args[1]]
  kHas,     // has(args[0]), args[0] a kSelect or kIndex
  kCall,    // text: the function; args: [target,] arguments; `method` when it has a target
  kNot,
  kNeg,
  kAnd,
  kOr,
  kCond,  // args[0] ? args[1] : args[2]
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
};

struct Node {
  Op op = Op::kNull;
  std::string text;
  std::int64_t number = 0;
  bool method = false;
  std::vector<std::unique_ptr<Node>> args;
  int depth = 1;  // of the subtree: evaluation recurses this deep (the parser bounds it)
};

// Parses `expression` into a tree. Errors as DeviceSelector::compile.
core::Result<std::unique_ptr<Node>> parse(std::string_view expression);

}  // namespace gpuscale::partition::cel
