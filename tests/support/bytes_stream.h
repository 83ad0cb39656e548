// BytesStream: a Beast SyncReadStream over fixed bytes, handed out in reads of at most `piece`
// bytes, then end of stream, as a socket delivers a request in pieces of any size. For tests and
// fuzzers of the request parser that read exactly as a server connection reads.
#pragma once

#include <algorithm>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <cstddef>
#include <cstring>
#include <string_view>

namespace gpuscale::testing {

class BytesStream {
 public:
  using executor_type = boost::asio::any_io_executor;
  // `bytes` must outlive the stream.
  BytesStream(std::string_view bytes, size_t piece) : bytes_(bytes), piece_(piece ? piece : 1) {}

  template <typename Buffers>
  size_t read_some(const Buffers& buffers, boost::beast::error_code& ec) {
    ec = {};
    if (bytes_.empty()) {
      ec = boost::asio::error::eof;
      return 0;
    }
    size_t copied = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && !bytes_.empty() && copied < piece_;
         ++it) {
      const size_t n = std::min({it->size(), bytes_.size(), piece_ - copied});
      std::memcpy(it->data(), bytes_.data(), n);
      bytes_.remove_prefix(n);
      copied += n;
    }
    return copied;
  }
  template <typename Buffers>
  size_t read_some(const Buffers& buffers) {
    boost::beast::error_code ec;
    return read_some(buffers, ec);
  }
  // Bytes not read yet.
  size_t left() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t piece_;
};

}  // namespace gpuscale::testing
