// Private: the HTTP/1.1 request parser of the servers (HttpsServer's listeners, PlainHttpListener),
// Beast's basic_parser with the limits of RequestLimits checked as the bytes arrive, and the
// request built straight into an HttpRequest (no Beast field storage in between).
//
// Why not Beast's request_parser: its field storage throws std::length_error for a field name or
// value of 64 KiB or more (the offsets are 16 bits), from inside the read handler; and it bounds
// only the total header and body sizes, not a field, the number of fields or the request target.
// Here every limit is an error value: refused() says which limit a failed parse hit, so the caller
// answers 431 (head) or 413 (body) and counts it.
//
// Trailer fields of a chunked body count against the field limits but are not kept (handlers never
// read them; Go keeps them apart from the header too).
//
// Thread safety: one parser per request, used by one thread at a time.
#pragma once

#include <boost/beast/http/basic_parser.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuscale/apiserver/http_message.h"
#include "gpuscale/apiserver/server_options.h"

namespace gpuscale::apiserver::detail {

// Which limit a request exceeded; kNone when it did not (or failed for another reason).
enum class RequestRefusal {
  kNone,
  kHeaderBytes,  // request line + header fields
  kFieldBytes,   // one header field (name + value)
  kHeaderCount,  // number of header fields
  kTargetBytes,  // the request-target
  kBodyBytes,    // the body (Content-Length or decoded chunks)
  kMalformed,    // not HTTP/1.x, or a target that is not an origin-form path
};

// The label value of a refusal in gpuscale_apiserver_refused_requests_total, e.g. "header_bytes".
std::string_view refusalLabel(RequestRefusal refusal);
// The HTTP status a refusal is answered with: 431, 413 or 400.
unsigned refusalStatus(RequestRefusal refusal);

// The read buffer of a connection: bounded, so that no request (head, chunk-size line, trailer) can
// grow it beyond the header limit and a little more (Beast then fails the read with
// buffer_overflow, which refusal() classifies).
size_t readBufferLimit(const RequestLimits& limits);
// What an idle keep-alive connection reads its next request into (and all it holds while idle).
inline constexpr size_t kIdleReadBytes = 2048;

class RequestParser final : public boost::beast::http::basic_parser<true> {
 public:
  explicit RequestParser(const RequestLimits& limits);

  // After a failed read: the limit it hit, classifying Beast's own errors too (header_limit,
  // body_limit, buffer_overflow, bad_*); kNone for errors of the stream (end of stream, timeout).
  RequestRefusal refusal(const boost::beast::error_code& ec) const;

  // The parsed request (method, target, version, fields in arrival order, body); valid once
  // is_done(). Moves out; call once.
  HttpRequest release();
  bool head() const { return head_; }

 private:
  using error_code = boost::beast::error_code;
  using string_view = boost::beast::string_view;

  void refuse(RequestRefusal refusal, error_code& ec);

  void on_request_impl(boost::beast::http::verb method, string_view methodString,
                       string_view target, int version, error_code& ec) override;
  void on_response_impl(int, string_view, int, error_code& ec) override;
  void on_field_impl(boost::beast::http::field, string_view name, string_view value,
                     error_code& ec) override;
  void on_header_impl(error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& contentLength,
                         error_code& ec) override;
  std::size_t on_body_impl(string_view body, error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t size, string_view extensions, error_code& ec) override;
  std::size_t on_chunk_body_impl(std::uint64_t remain, string_view body, error_code& ec) override;
  void on_finish_impl(error_code& ec) override;

  const RequestLimits limits_;
  HttpRequest request_;
  RequestRefusal refusal_ = RequestRefusal::kNone;
  size_t fields_ = 0;
  size_t headBytes_ = 0;  // the request line and the fields so far, as counted for headerBytes
  bool head_ = false;
};

}  // namespace gpuscale::apiserver::detail
