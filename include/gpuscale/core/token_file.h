// A bearer token kept in a file that may be rotated (projected service-account tokens, Vault
// agents): read, trimmed, and re-read when the file's modification time or size changes, looked at
// no more often than once per `recheck` (zero: on every call). When a re-read fails or finds the
// file empty after a good read, the last good token stays in use, so a file being replaced never
// sends a request out without credentials.
//
// Used by the Kubernetes client (service-account and kubeconfig tokens) and the Prometheus client
// (bearer token files), so both fail the same way.
//
// Thread safety: thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <string>

#include "gpuscale/core/result.h"

namespace gpuscale::core {

class TokenFile {
 public:
  explicit TokenFile(std::filesystem::path path,
                     std::chrono::steady_clock::duration recheck = std::chrono::seconds(0));

  // The current token; an error (Status::unavailable, payload FileFailure::kUnreadable) only while
  // the file has never been read successfully with a non-empty content.
  Result<std::string> token();

  const std::filesystem::path& path() const { return path_; }

 private:
  const std::filesystem::path path_;
  const std::chrono::steady_clock::duration recheck_;
  std::mutex mutex_;
  bool loaded_ = false;
  std::chrono::steady_clock::time_point nextCheck_{};
  struct timespec mtime_ = {};
  off_t size_ = -1;
  std::string token_;
};

}  // namespace gpuscale::core
