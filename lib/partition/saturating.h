// Replica and pod counts that saturate instead of overflowing (private to lib/partition): the API
// admits int32 limits (maxReplicas 2147483647) and metric values far beyond any real ratio, and a
// count the planner derives from them must stay an int without undefined behaviour.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace gpuscale::partition {

inline constexpr int kMaxCount = std::numeric_limits<int>::max();

// `x` rounded towards zero into int's range (NaN is 0).
inline int saturatedInt(double x) {
  if (std::isnan(x)) return 0;
  if (x >= static_cast<double>(kMaxCount)) return kMaxCount;
  if (x <= static_cast<double>(-kMaxCount)) return -kMaxCount;
  return static_cast<int>(x);
}

inline int saturatedInt(std::int64_t x) {
  if (x > kMaxCount) return kMaxCount;
  if (x < -kMaxCount) return -kMaxCount;
  return static_cast<int>(x);
}

inline int addSaturated(int a, int b) {
  return saturatedInt(static_cast<std::int64_t>(a) + static_cast<std::int64_t>(b));
}

}  // namespace gpuscale::partition
