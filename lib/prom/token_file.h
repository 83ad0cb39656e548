// A bearer token kept in a file that may be rotated (projected service-account tokens, Vault
// agents): read, trimmed, and re-read whenever the file's modification time or size changes. When a
// re-read fails after a good read, the last good token stays in use.
//
// Thread safety: thread-safe.
#pragma once

#include <ctime>
#include <mutex>
#include <string>

#include "gpuscale/core/result.h"

namespace gpuscale::prom {

class TokenFile {
 public:
  explicit TokenFile(std::string path) : path_(std::move(path)) {}

  // The current token; an error only when the file has never been read successfully or is empty.
  core::Result<std::string> token();

 private:
  std::string path_;
  std::mutex mutex_;
  bool loaded_ = false;
  struct timespec mtime_ = {};
  long long size_ = -1;
  std::string token_;
};

}  // namespace gpuscale::prom
