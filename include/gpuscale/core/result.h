// Result<T>: a value or the Status that explains why there is none.
//
// The project targets C++20, which has no std::expected; Result is the small subset we need. A
// Result built from a Status must carry a non-OK status (an OK status without a value is a
// programming error and becomes an InternalError). Accessing value() of a failed Result is a
// programming error (asserted in debug builds).
//
// Usage:
//   Result<Rule> r = parseRule(node);
//   if (!r) return r.status();
//   use(*r);
//
// Thread safety: as for T.
#pragma once

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

#include "gpuscale/core/status.h"

namespace gpuscale::core {

template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<T, Status>, "use Status for operations without a value");

 public:
  Result(const T& value) : state_(value) {}        // NOLINT(google-explicit-constructor)
  Result(T&& value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status)                            // NOLINT(google-explicit-constructor)
      : state_(status.ok() ? Status::internal("error result built from an OK status")
                           : std::move(status)) {}

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  // The error; an OK Status when the Result holds a value.
  Status status() const { return ok() ? Status() : std::get<Status>(state_); }

  // The value, or `fallback` when there is none.
  T valueOr(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace gpuscale::core
