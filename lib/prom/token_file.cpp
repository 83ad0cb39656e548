#include "token_file.h"

#include <sys/stat.h>

#include "gpuscale/prom/credentials.h"
#include "gpuscale/prom/errors.h"
#include "text.h"

namespace gpuscale::prom {

core::Result<std::string> TokenFile::token() {
  struct stat info {};
  bool statOk = ::stat(path_.c_str(), &info) == 0;
  std::lock_guard lock(mutex_);
  bool changed = statOk && (info.st_mtim.tv_sec != mtime_.tv_sec ||
                            info.st_mtim.tv_nsec != mtime_.tv_nsec || info.st_size != size_);
  if (!loaded_ || changed) {
    auto content = statOk ? readFile(path_) : core::Result<std::string>(Status::invalid(""));
    if (content) {
      std::string trimmed(trimSpace(*content));
      if (!trimmed.empty()) {
        token_ = std::move(trimmed);
        loaded_ = true;
        mtime_ = info.st_mtim;
        size_ = info.st_size;
      }
    }
  }
  if (!loaded_) {
    return failure(FailureKind::kCredentials, "cannot read a token from " + path_);
  }
  return token_;
}

}  // namespace gpuscale::prom
