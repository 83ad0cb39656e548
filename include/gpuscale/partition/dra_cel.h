// DeviceSelector: the subset of CEL that DeviceClass and ResourceClaim selectors are written in,
// evaluated against one device the way kube-scheduler's DRA allocator evaluates them, so the
// planner can tell which published devices (and which devices a MIG reshape would publish) a
// claim can be allocated.
//
// The subset covers what NVIDIA's GPU DRA driver's DeviceClasses and typical claims use:
//   - the variable `device`: `device.driver`, `device.allowMultipleAllocations`,
//     `device.attributes['<domain>'].<name>` and `device.capacity['<domain>'].<name>` (also with
//     `["<domain>"]`, and `[...]` instead of `.name`); an unknown domain is an empty map, an
//     unknown name a runtime error, as in Kubernetes;
//   - literals: strings ('...' and "..." with the usual escapes), integers (also `1u`), true,
//     false, null, lists `[a, b]`;
//   - operators: `!`, unary `-`, `&&`, `||` (CEL's commutative rules: `false && error` is false,
//     `true || error` is true), `? :`, `==`, `!=`, `<`, `<=`, `>`, `>=`, `in` (list membership, map
//     keys), `+` `-` `*` `/` `%` on integers and `+` on strings;
//   - `has(x.name)` on attribute and capacity maps;
//   - string methods `startsWith`, `endsWith`, `contains`, `matches` (RE2, as CEL's), `size`,
//     `lowerAscii`, `upperAscii`, and `size(x)`;
//   - Kubernetes' `semver('1.2.3')` and `quantity('10Gi')` with `compareTo`, `isGreaterThan`,
//     `isLessThan`, and `major()`/`minor()`/`patch()` on versions, `asInteger()` and
//     `isInteger()` on quantities. Version attributes compare as semantic versions (major, minor,
//     patch numerically; a pre-release sorts before its release); quantities by value.
// Anything else (macros such as `exists` or `all`, `cel.bind`, doubles, maps, other functions or
// variables) does not compile: compile() names the construct (reason "Unsupported"), so a caller
// can skip the claim with that reason instead of guessing.
//
// Equality across different types is false (CEL's heterogeneous equality); an ordering across
// different types, an unknown attribute, a division by zero and a bad regular expression are
// runtime errors (matches() returns the error).
//
// Thread safety: an immutable value once compiled; matches() may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/dra_objects.h"

namespace gpuscale::partition {

namespace cel {
struct Node;
}

inline constexpr std::string_view kCelUnsupportedReason = kDraUnsupportedReason;

class DeviceSelector {
 public:
  // Errors: 422 with reason kCelUnsupportedReason for a construct outside the subset, "Invalid"
  // for a syntax error; the message names what and where (column).
  static core::Result<DeviceSelector> compile(std::string_view expression);

  // Whether `device`, published by `driver`, matches. Errors: a CEL runtime error.
  core::Result<bool> matches(const DraDevice& device, std::string_view driver) const;

  const std::string& expression() const { return expression_; }

 private:
  std::shared_ptr<const cel::Node> root_;
  std::string expression_;
};

}  // namespace gpuscale::partition
