// What the fuzz harnesses share: how a harness reports a broken invariant (a message and the
// input on stderr, then abort(), so that libFuzzer saves the input as a crash), and how one input
// drives one of several targets (the first byte picks the target, the rest is its input).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <string_view>

namespace gpuscale::fuzz {

// Prints "<harness>: <what> for [<input>]" (the input cut to its first 400 bytes; the saved
// crash file holds all of it) and aborts.
[[noreturn]] inline void fail(const char* harness, const char* what, std::string_view input) {
  std::fprintf(stderr, "%s: %s for [%.*s]\n", harness, what,
               static_cast<int>(std::min<std::size_t>(input.size(), 400)), input.data());
  std::abort();
}

using Target = std::function<void(std::string_view)>;

// Runs one of `targets` (not empty) on `data`: the first byte modulo their number picks it, the
// rest of the bytes are its input. An empty input runs nothing. Returns 0, libFuzzer's "go on".
inline int dispatch(const std::uint8_t* data, std::size_t size,
                    std::initializer_list<Target> targets) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  targets.begin()[data[0] % targets.size()](input);
  return 0;
}

}  // namespace gpuscale::fuzz
