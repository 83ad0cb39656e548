// Fuzzes LabelSelector::parse: no input may crash it, and every selector that parses must print a
// canonical string that parses back to the same string and matches the same label sets.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_harness.h"
#include "gpuscale/core/label_selector.h"

namespace {

using gpuscale::core::Labels;
using gpuscale::core::LabelSelector;
using gpuscale::core::Requirement;

[[noreturn]] void fail(const char* what, std::string_view input) {
  gpuscale::fuzz::fail("fuzz_label_selector", what, input);
}

// Label sets that exercise each requirement: its key missing, set to each of its values, to a value
// it does not list, and to integers around its bound.
std::vector<Labels> probeLabels(const LabelSelector& selector) {
  std::vector<Labels> probes{{}};
  for (const Requirement& r : selector.requirements()) {
    std::vector<std::string> candidates = r.values;
    candidates.push_back("zz-not-listed");
    candidates.push_back("0");
    candidates.push_back("-5");
    candidates.push_back("100");
    for (const std::string& v : candidates) {
      probes.push_back({{r.key, v}});
      Labels all;
      for (const Requirement& other : selector.requirements()) {
        all[other.key] = other.values.empty() ? v : other.values.front();
      }
      all[r.key] = v;
      probes.push_back(std::move(all));
    }
  }
  return probes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parsed = LabelSelector::parse(input);
  if (!parsed.ok()) {
    if (parsed.status().httpCode() != 400) fail("error that is not a 400", input);
    return 0;
  }
  for (const Requirement& r : parsed->requirements()) {
    if (!gpuscale::core::isValidLabelKey(r.key)) fail("invalid key accepted", input);
    for (size_t i = 0; i < r.values.size(); ++i) {
      if (!gpuscale::core::isValidLabelValue(r.values[i])) fail("invalid value accepted", input);
      if (i > 0 && !(r.values[i - 1] < r.values[i])) fail("values not sorted and unique", input);
    }
  }
  const std::string canonical = parsed->toString();
  const auto reparsed = LabelSelector::parse(canonical);
  if (!reparsed.ok()) fail("canonical form does not parse", input);
  if (reparsed->toString() != canonical) fail("canonical form does not round-trip", input);
  for (const Labels& labels : probeLabels(*parsed)) {
    if (parsed->matches(labels) != reparsed->matches(labels)) {
      fail("canonical form matches differently", input);
    }
  }
  return 0;
}
