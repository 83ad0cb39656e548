// Fuzzes the Prometheus response decoders (the bodies come from a remote server): no input may
// crash them, an accepted body must be valid JSON, and an accepted vector or matrix must have as
// many elements as the body's result array. The first byte picks the decoder and the HTTP status;
// the rest is the body.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "fuzz_harness.h"
#include "gpuscale/prom/wire.h"

namespace {

[[noreturn]] void fail(const char* what, std::string_view input) {
  gpuscale::fuzz::fail("fuzz_prom_response", what, input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  constexpr int kStatuses[] = {200, 400, 422, 503, 500, 204, 404, 502};
  int status = kStatuses[(data[0] >> 2) % 8];
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  bool ok = false;
  switch (data[0] % 3) {
    case 0: {
      auto result = gpuscale::prom::decodeQueryResponse(status, body);
      ok = result.ok();
      if (ok) {
        auto document = nlohmann::json::parse(body, nullptr, false);
        const auto& items = document["data"]["result"];
        if ((*result)->type == gpuscale::prom::ResultType::kVector &&
            (*result)->vector.size() != items.size()) {
          fail("vector size differs from the body", body);
        }
        if ((*result)->type == gpuscale::prom::ResultType::kMatrix &&
            (*result)->matrix.size() != items.size()) {
          fail("matrix size differs from the body", body);
        }
      }
      break;
    }
    case 1:
      ok = gpuscale::prom::decodeSeriesResponse(status, body).ok();
      break;
    default:
      ok = gpuscale::prom::decodeStringListResponse(status, body).ok();
      break;
  }
  if (ok && !nlohmann::json::accept(body)) fail("accepted a body that is not JSON", body);
  return 0;
}
