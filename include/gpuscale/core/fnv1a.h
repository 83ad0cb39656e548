// FNV-1a hashes of text: the same in every build, process and platform (std::hash promises none of
// that), for names and identities derived from content (config names, emulated GPU UUIDs).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuscale::core {

namespace detail {

template <typename Hash>
constexpr Hash fnv1a(std::string_view text, Hash offsetBasis, Hash prime) {
  Hash h = offsetBasis;
  for (unsigned char c : text) {
    h ^= c;
    h *= prime;
  }
  return h;
}

}  // namespace detail

constexpr std::uint32_t fnv1a32(std::string_view text) {
  return detail::fnv1a<std::uint32_t>(text, 2166136261u, 16777619u);
}

constexpr std::uint64_t fnv1a64(std::string_view text) {
  return detail::fnv1a<std::uint64_t>(text, 14695981039346656037ull, 1099511628211ull);
}

}  // namespace gpuscale::core
