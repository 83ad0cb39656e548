// Fuzzes the streaming gunzip of Prometheus response bodies (`Content-Encoding: gzip` from a remote
// server). The first byte picks the mode and the piece sizes the body arrives in:
//   - even: the rest is a compressed body from the network; no input may crash or loop, and what
//     comes out is bounded by what deflate can expand to;
//   - odd: the rest is compressed with zlib (gzip wrapper, level from the first byte) and must come
//     back byte for byte without an error, whatever the piece sizes; the same body cut one byte
//     short must end in an error, never in a silently short result.
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gunzip.h"

namespace {

using gpuscale::prom::BodyPieces;
using gpuscale::prom::Gunzip;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_gunzip: %s\n", what);
  std::abort();
}

std::string gzip(std::string_view text, int level) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    fail("deflateInit2");
  }
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) fail("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// `body` in pieces whose sizes cycle through 1..`step` (never empty: an empty piece ends a body).
BodyPieces piecesOf(std::string_view body, size_t step) {
  return [body, step, at = size_t{0}, n = size_t{0}]() mutable {
    const size_t size = 1 + (n++ % step) * 7;
    const std::string_view piece = body.substr(std::min(at, body.size()), size);
    at += piece.size();
    return piece;
  };
}

// Everything the gunzip yields, and its error.
std::pair<std::string, std::string> drain(std::string_view compressed, size_t step) {
  const BodyPieces pieces = piecesOf(compressed, step);
  Gunzip gunzip(pieces);
  std::string out;
  for (std::string_view piece = gunzip.next(); !piece.empty(); piece = gunzip.next()) {
    out.append(piece);
    if (out.size() > 1032 * (compressed.size() + 64)) fail("more output than deflate allows");
  }
  return {out, gunzip.error()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t step = 1 + (data[0] >> 1) % 16;
  if ((data[0] & 1) == 0) {
    (void)drain(rest, step);
    return 0;
  }
  const std::string compressed = gzip(rest, static_cast<int>(data[0] >> 1) % 10);
  const auto [out, error] = drain(compressed, step);
  if (!error.empty()) fail("a gzip stream from zlib was rejected");
  if (out != rest) fail("gunzip(gzip(x)) != x");
  const auto [cut, cutError] =
      drain(std::string_view(compressed).substr(0, compressed.size() - 1), step);
  if (cutError.empty()) fail("a body cut short was accepted");
  if (!std::string_view(rest).starts_with(cut)) fail("a cut body yielded other bytes");
  return 0;
}
