// Gunzip: a gzip-compressed body, decompressed piece by piece as a decoder pulls it (zlib's
// inflate). Memory is one output piece and zlib's window, however large the body.
//
// Thread safety: not thread-safe; one consumer.
#pragma once

#include <zlib.h>

#include <string>
#include <string_view>

#include "gpuscale/prom/wire.h"

namespace gpuscale::prom {

class Gunzip {
 public:
  // Reads compressed pieces from `compressed`, which must outlive this object.
  explicit Gunzip(const BodyPieces& compressed);
  ~Gunzip();
  Gunzip(const Gunzip&) = delete;
  Gunzip& operator=(const Gunzip&) = delete;

  // The next decompressed piece, valid until the next call; empty at the end of the stream or on
  // an error (see error()).
  std::string_view next();
  // Empty, or why the compressed body could not be decompressed (corrupt data, cut short).
  const std::string& error() const { return error_; }

 private:
  const BodyPieces& compressed_;
  z_stream stream_{};
  std::string out_;
  std::string_view input_;
  bool ended_ = false;
  std::string error_;
};

}  // namespace gpuscale::prom
