// Fuzzes the plain listener (apiserver::PlainHttpListener: the reconciler's probes, the emulator's
// health and exporter endpoints) where its connections read: the input is what one connection
// receives, requests back to back, each read as the connection reads it (the server's
// RequestParser with the listener's limits, through a read buffer bounded as the connection's, in
// reads of a size the first input byte picks), answered through the listener's handler adapter and
// written as the connection writes it. Runs in the input (request_bytes.h) make requests at and
// far beyond the limits out of a few bytes.
//
// Invariants beyond "no crash, no throw": a refused request is answered 400, 413 or 431 and ends
// the connection; an accepted one is within every limit and reaches the handler with its decoded
// path; the response written parses back (Beast's response parser) with the handler's status and
// body (none for HEAD, with the GET's Content-Length) and says Connection: close, so the connection
// reads no further request.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_harness.h"
#include "gpuscale/apiserver/plain_http_listener.h"
#include "http_session.h"
#include "request_bytes.h"

namespace {

namespace http = boost::beast::http;
using namespace gpuscale;  // NOLINT: a fuzz harness, one file

[[noreturn]] void fail(const char* what, std::string_view input) {
  gpuscale::fuzz::fail("fuzz_plain_listener", what, input);
}

// Answers as the reconciler's probe listener does: /healthz, /livez and /readyz, 404 otherwise.
core::PlainHttpReply probes(std::string_view path) {
  if (path == "/healthz" || path == "/livez" || path == "/readyz") return {200, "text/plain", "ok"};
  return {404, "text/plain; charset=utf-8", "404 page not found"};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const apiserver::HttpHandler handler = apiserver::detail::adaptPlainHandler(probes);
  const apiserver::PlainListenerOptions options;
  const apiserver::RequestLimits& limits = options.requestLimits;
  fuzz::ReadRequest read = fuzz::readFuzzInput(data, size, limits);
  if (!read.request) {
    if (!fuzz::refusedAsTheServerAnswers(read)) fail("refused with a bad status", "");
    return 0;
  }
  const bool head = read.head;
  apiserver::HttpRequest& request = *read.request;
  if (const char* exceeded = fuzz::exceededLimit(request, limits)) fail(exceeded, request.target);

  const core::PlainHttpReply expected = probes(request.path);
  apiserver::HttpResponse response = handler(request);
  response.closeConnection = true;  // one request per connection
  auto written = apiserver::detail::toBeastResponse(std::move(response), head);
  written.keep_alive(false);
  std::string wire;
  http::serializer<false, http::string_body> serializer(written);
  boost::beast::error_code writeError;
  const auto collect = [&](boost::beast::error_code&, const auto& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::const_buffer piece = *it;  // Beast's iterators have no operator->
      wire.append(static_cast<const char*>(piece.data()), piece.size());
    }
    serializer.consume(boost::asio::buffer_size(buffers));
  };
  do {
    serializer.next(writeError, collect);
  } while (!writeError && !serializer.is_done());
  if (writeError) fail("the response did not serialize", request.target);
  http::response_parser<http::string_body> reader;
  reader.skip(head);
  reader.eager(true);
  boost::beast::error_code readError;
  reader.put(boost::asio::buffer(wire), readError);
  if (readError || !reader.is_done()) fail("the response does not parse back", wire);
  const auto& back = reader.get();
  if (back.result_int() != static_cast<unsigned>(expected.status)) fail("status changed", wire);
  if (head ? !back.body().empty() : back.body() != expected.body) fail("body changed", wire);
  if (back.keep_alive()) fail("the response keeps the connection", wire);
  return 0;
}
