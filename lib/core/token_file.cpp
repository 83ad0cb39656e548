#include "gpuscale/core/token_file.h"

#include <sys/stat.h>

#include "gpuscale/core/files.h"

namespace gpuscale::core {

TokenFile::TokenFile(std::filesystem::path path, std::chrono::steady_clock::duration recheck)
    : path_(std::move(path)), recheck_(recheck) {}

Result<std::string> TokenFile::token() {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  if (!loaded_ || now >= nextCheck_) {
    nextCheck_ = now + recheck_;
    struct stat info {};
    const bool statOk = ::stat(path_.c_str(), &info) == 0;
    const bool changed =
        statOk && (info.st_mtim.tv_sec != mtime_.tv_sec || info.st_mtim.tv_nsec != mtime_.tv_nsec ||
                   info.st_size != size_);
    if (!loaded_ || changed) {
      if (auto content = statOk ? readFile(path_) : Result<std::string>(Status::invalid(""))) {
        if (std::string_view trimmed = trimSpace(*content); !trimmed.empty()) {
          token_ = std::string(trimmed);
          loaded_ = true;
          mtime_ = info.st_mtim;
          size_ = info.st_size;
        }
      }
    }
  }
  if (!loaded_) {
    return Status::unavailable("cannot read a token from " + path_.string())
        .withPayload(FileFailure::kUnreadable);
  }
  return token_;
}

}  // namespace gpuscale::core
