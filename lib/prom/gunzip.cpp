#include "gunzip.h"

namespace gpuscale::prom {
namespace {

constexpr size_t kOutBytes = 64 * 1024;
constexpr int kGzipWindow = 16 + MAX_WBITS;  // gzip header and trailer, largest window

}  // namespace

Gunzip::Gunzip(const BodyPieces& compressed) : compressed_(compressed), out_(kOutBytes, '\0') {
  if (inflateInit2(&stream_, kGzipWindow) != Z_OK) {
    error_ = "zlib could not start";
    ended_ = true;
  }
}

Gunzip::~Gunzip() { inflateEnd(&stream_); }

std::string_view Gunzip::next() {
  while (!ended_) {
    if (input_.empty()) {
      input_ = compressed_();
      if (input_.empty()) {
        // The compressed body ended before the gzip stream did.
        error_ = "gzip body cut short";
        ended_ = true;
        break;
      }
    }
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input_.data()));
    stream_.avail_in = static_cast<uInt>(input_.size());
    stream_.next_out = reinterpret_cast<Bytef*>(out_.data());
    stream_.avail_out = static_cast<uInt>(out_.size());
    int rc = inflate(&stream_, Z_NO_FLUSH);
    input_.remove_prefix(input_.size() - stream_.avail_in);
    size_t produced = out_.size() - stream_.avail_out;
    if (rc == Z_STREAM_END) {
      ended_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error_ = std::string("gzip: ") + (stream_.msg ? stream_.msg : "corrupt data");
      ended_ = true;
      break;
    }
    if (produced > 0) return std::string_view(out_.data(), produced);
  }
  return {};
}

}  // namespace gpuscale::prom
