// The partition policies the reconciler runs with: the `--config` YAML file, re-read when it
// changes. A file that does not parse at start is an error for the caller (exit 2); a bad file on
// reload is logged, the previous policies stay, and lastReloadSuccessful() turns false (exported as
// gpuscale_config_last_reload_successful). A file that cannot be read (deleted, or mid-swap) is one
// failed reload, logged once, until it can be read again. Without a file there are no policies:
// no HPA is managed and no node changed (the caller says so once at startup).
//
// Thread safety: current() from any thread; reloadIfChanged() from one thread.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/policy.h"

namespace gpuscale::reconciler {

class PolicySource {
 public:
  // Loads `path` ("" = no policies at all).
  static core::Result<std::shared_ptr<PolicySource>> open(std::filesystem::path path);

  std::shared_ptr<const partition::PolicySet> current() const;
  // Re-reads the file when its modification time or size changed. Returns true when new policies
  // were loaded.
  bool reloadIfChanged();
  bool lastReloadSuccessful() const { return lastOk_.load(); }
  uint64_t reloads() const { return reloads_.load(); }

 private:
  explicit PolicySource(std::filesystem::path path) : path_(std::move(path)) {}
  core::Status load();

  std::filesystem::path path_;
  mutable std::mutex mu_;
  std::shared_ptr<const partition::PolicySet> policies_;
  std::filesystem::file_time_type mtime_{};
  std::uintmax_t size_ = 0;
  bool unreadable_ = false;  // the last attempt could not read the file (already reported)
  std::atomic<bool> lastOk_{true};
  std::atomic<uint64_t> reloads_{0};
};

}  // namespace gpuscale::reconciler
