// What the request fuzzers share: a short input that can stand for a request at, or far beyond,
// the server's real limits, and a read of one request exactly as a server connection reads it.
//
// Runs: the byte 0xFF followed by a count byte k and a byte c stands for c repeated (k + 1) * 1024
// times (1 KiB to 256 KiB), so a few bytes make a 64 KiB header field or a megabyte target
// (libFuzzer rarely grows inputs that long by itself; the smoke runs cap inputs at 64 KiB). A 0xFF
// without its two bytes stays as it is.
#pragma once

#include <algorithm>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuscale/apiserver/http_message.h"
#include "gpuscale/apiserver/server_options.h"
#include "request_parser.h"
#include "support/bytes_stream.h"

namespace gpuscale::fuzz {

inline constexpr size_t kMaxExpandedBytes = 4 << 20;

// One request read from `bytes` as a server connection reads it: the server's RequestParser with
// `limits`, a read buffer bounded by readBufferLimit(), reads of `piece` bytes.
struct ReadRequest {
  std::optional<apiserver::HttpRequest> request;  // when it parsed
  bool head = false;                              // a HEAD request
  unsigned refusedWith = 0;  // the status a refused request is answered with (0: not refused)
};

inline ReadRequest readLikeAConnection(std::string_view bytes, size_t piece,
                                       const apiserver::RequestLimits& limits) {
  testing::BytesStream stream(bytes, piece);
  boost::beast::flat_buffer buffer(apiserver::detail::readBufferLimit(limits));
  apiserver::detail::RequestParser parser(limits);
  boost::beast::error_code ec;
  boost::beast::http::read(stream, buffer, parser, ec);
  ReadRequest out;
  if (ec) {
    const auto refusal = parser.refusal(ec);
    if (refusal != apiserver::detail::RequestRefusal::kNone) {
      out.refusedWith = apiserver::detail::refusalStatus(refusal);
    }
    return out;
  }
  out.head = parser.head();
  out.request = parser.release();
  return out;
}

// A request that did not parse is answered 400, 413 or 431, or not at all (the peer went away).
inline bool refusedAsTheServerAnswers(const ReadRequest& read) {
  const unsigned status = read.refusedWith;
  return status == 0 || status == 400 || status == 413 || status == 431;
}

// The first limit `request` exceeds, or nullptr when it keeps within all of them.
inline const char* exceededLimit(const apiserver::HttpRequest& request,
                                 const apiserver::RequestLimits& limits) {
  if (request.target.size() > limits.targetBytes) return "target over the limit";
  if (request.headers.size() > limits.headerCount) return "too many fields";
  for (const auto& [name, value] : request.headers) {
    if (name.size() + value.size() > limits.fieldBytes) return "field over the limit";
  }
  if (request.body.size() > limits.bodyBytes) return "body over the limit";
  return nullptr;
}

inline std::string expandRuns(std::string_view input) {
  std::string out;
  for (size_t i = 0; i < input.size() && out.size() < kMaxExpandedBytes; ++i) {
    if (static_cast<unsigned char>(input[i]) == 0xFF && i + 2 < input.size()) {
      const size_t count = (static_cast<unsigned char>(input[i + 1]) + 1) * size_t{1024};
      out.append(std::min(count, kMaxExpandedBytes - out.size()), input[i + 2]);
      i += 2;
    } else {
      out += input[i];
    }
  }
  return out;
}

// The request a fuzz input stands for: its first byte picks the size of each read (1 byte to
// 64 KiB), the rest, with its runs expanded, is what the connection reads. `size` is at least 1.
inline ReadRequest readFuzzInput(const uint8_t* data, size_t size,
                                 const apiserver::RequestLimits& limits) {
  const size_t piece = size_t{1} << (data[0] % 17);
  const std::string bytes =
      expandRuns(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  return readLikeAConnection(bytes, piece, limits);
}

}  // namespace gpuscale::fuzz
