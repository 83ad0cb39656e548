// Tables of an enum's values and the names they are written as, read both ways, for enums whose
// names are both written (JSON fields, annotations, reports) and parsed back: one table keeps the
// two directions in step, where a switch and an if-chain could drift apart.
//
// Thread safety: pure functions over constant tables.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace gpuscale::core {

template <typename E, std::size_t N>
using EnumNames = std::array<std::pair<E, std::string_view>, N>;

// The name `names` gives `value`; `otherwise` for a value the table does not hold.
template <typename E, std::size_t N>
constexpr std::string_view enumName(const EnumNames<E, N>& names, E value,
                                    std::string_view otherwise) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return otherwise;
}

// The value `names` calls `name` (exactly, case-sensitive); nullopt for any other text.
template <typename E, std::size_t N>
constexpr std::optional<E> enumValue(const EnumNames<E, N>& names, std::string_view name) {
  for (const auto& [v, n] : names) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace gpuscale::core
