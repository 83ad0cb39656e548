// Fuzzes what the external-metrics fallback (KEDA's metrics server, or any other
// external.metrics.k8s.io server the adapter forwards to) sends back, before the adapter passes it
// on to the HPA: the raw HTTP response is read as the fallback client reads it (Beast's response
// parser with the client's header and body limits, in reads of a size the first input byte picks)
// and its body decoded as an ExternalMetricValueList or an APIResourceList (the second byte picks).
// Runs in the input (request_bytes.h) make huge headers and bodies out of a few bytes.
//
// Invariants beyond "no crash": no exception escapes the decoders (a remote that sends a Status
// whose `reason` is a number must not make the adapter throw); a non-200 answer never decodes as
// data, and the Status it becomes has an HTTP code in [400, 599]; every decoded value's quantity
// prints and parses back to the same value.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz_harness.h"
#include "gpuscale/adapter/external_metrics_remote.h"
#include "request_bytes.h"
#include "support/bytes_stream.h"

namespace {

namespace http = boost::beast::http;
using namespace gpuscale;  // NOLINT: a fuzz harness, one file

[[noreturn]] void fail(const char* what, std::string_view input) {
  gpuscale::fuzz::fail("fuzz_external_fallback", what, input);
}

template <typename T>
void checkError(const core::Result<T>& result, int httpCode, std::string_view body) {
  if (result) {
    if (httpCode != 200) fail("a non-200 answer decoded as data", body);
    return;
  }
  const int code = result.status().httpCode();
  if (code < 400 || code > 599) fail("an error Status with an HTTP code outside 400-599", body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t piece = size_t{1} << (data[0] % 17);
  const bool list = data[1] % 2 == 1;
  const std::string bytes =
      fuzz::expandRuns(std::string_view(reinterpret_cast<const char*>(data + 2), size - 2));
  testing::BytesStream stream(bytes, piece);
  boost::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.header_limit(adapter::kFallbackMaxHeaderBytes);
  parser.body_limit(adapter::kFallbackMaxBodyBytes);
  boost::beast::error_code ec;
  try {
    http::read(stream, buffer, parser, ec);
  } catch (const std::exception& error) {
    fail("reading the answer threw", error.what());
  }
  if (ec) return 0;
  const int code = static_cast<int>(parser.get().result_int());
  const std::string& body = parser.get().body();
  try {
    if (list) {
      checkError(adapter::decodeExternalResourceList(code, body), code, body);
    } else {
      auto values = adapter::decodeExternalMetricReply(code, body);
      checkError(values, code, body);
      if (values) {
        for (const auto& value : *values) {
          auto again = core::Quantity::parse(value.value.toString());
          if (!again || !(*again == value.value)) fail("a value does not print back", body);
        }
      }
    }
  } catch (const std::exception& error) {
    fail("a decoder threw", error.what());
  }
  return 0;
}
