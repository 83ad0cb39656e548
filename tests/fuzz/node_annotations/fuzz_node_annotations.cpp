// Fuzzes the annotations the reconciler reads back from Nodes (anyone who can patch a Node can
// write them): `gpuscale.io/intent`, `gpuscale.io/outcome` and `gpuscale.io/backoff-until`. No
// input may crash a decoder, and what decodes must survive a round trip:
// decodeNodeIntent(encodeNodeIntent(x))
// == x (times truncated to whole seconds, as they are written), and parseRfc3339(formatRfc3339(t))
// == t for whole-second times.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_harness.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/reconciler/intent.h"

namespace {

using gpuscale::core::WallTime;

[[noreturn]] void fail(const char* what, std::string_view input) {
  gpuscale::fuzz::fail("fuzz_node_annotations", what, input);
}

WallTime wholeSeconds(WallTime at) { return std::chrono::floor<std::chrono::seconds>(at); }

void backoffUntil(std::string_view text) {
  const auto at = gpuscale::core::parseRfc3339(text);
  if (!at) return;
  const WallTime whole = wholeSeconds(*at);
  const std::string written = gpuscale::core::formatRfc3339(*at);
  const auto back = gpuscale::core::parseRfc3339(written);
  if (!back || *back != whole) fail("RFC 3339 time does not survive formatting", text);
  const auto micro = gpuscale::core::parseRfc3339(gpuscale::core::formatRfc3339Micro(*at));
  if (!micro || wholeSeconds(*micro) != whole) fail("RFC 3339 micro time differs", text);
}

void intent(std::string_view text) {
  auto decoded = gpuscale::reconciler::decodeNodeIntent(text);
  if (!decoded) return;
  decoded->started = wholeSeconds(decoded->started);
  if (decoded->applied) decoded->applied = wholeSeconds(*decoded->applied);
  const std::string written = gpuscale::reconciler::encodeNodeIntent(*decoded);
  const auto back = gpuscale::reconciler::decodeNodeIntent(written);
  if (!back || !(*back == *decoded)) fail("node intent does not survive encoding", text);
}

void outcome(std::string_view text) {
  const auto decoded = gpuscale::reconciler::decodeNodeOutcome(text);
  if (!decoded) return;
  const auto back =
      gpuscale::reconciler::decodeNodeOutcome(gpuscale::reconciler::encodeNodeOutcome(*decoded));
  if (!back || back->plan != decoded->plan || back->result != decoded->result ||
      back->message != decoded->message || back->kind != decoded->kind) {
    fail("node outcome does not survive encoding", text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return gpuscale::fuzz::dispatch(data, size, {intent, backoffUntil, outcome});
}
