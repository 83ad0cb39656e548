// ConfigWatcher: tells its owner when the rule file (`--config`) may have changed, so that it can
// be reloaded (config_reloader.h).
//
// Three sources, all served by one background thread:
//  - inotify on the file (the symlinks resolved: the file a ConfigMap's `..data` points to) and on
//    the folder it was named in, because Kubernetes updates a ConfigMap volume by writing a new
//    timestamped folder and renaming a new `..data` symlink over the old one (the file named in
//    `--config` never changes itself), and editors rename a new file over the old one. After an
//    event the watcher waits `settle` for the burst to end, then reads the file and calls back
//    only when its content differs from the content it last reported (or saw at start);
//  - SIGHUP (when `sighup` is set): calls back whatever the content. SIGHUP must be blocked in
//    every thread of the process (block it before any thread starts); the watcher reads it from a
//    signalfd;
//  - a poll every `pollInterval`, for file systems without inotify: the same content comparison.
// When the callback returns false (the change could not be applied for a reason that may pass,
// e.g. a backend that did not answer), the next poll calls back again with the same content.
// If inotify is unavailable the watcher logs that once and polls.
//
// Thread safety: start()/stop() from one controlling thread; the callback runs on the watcher's
// thread, one call at a time.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "gpuscale/core/duration.h"

namespace gpuscale::adapter {

struct ConfigWatcherOptions {
  core::Duration pollInterval = std::chrono::seconds(5);
  core::Duration settle = std::chrono::milliseconds(100);
  bool sighup = true;
};

class ConfigWatcher {
 public:
  enum class Trigger { kFileChanged, kSignal };
  // Returns true when the change was dealt with (applied, or rejected for good).
  using Callback = std::function<bool(Trigger)>;

  ConfigWatcher(std::string path, Callback onChange, ConfigWatcherOptions options = {});
  ~ConfigWatcher();
  ConfigWatcher(const ConfigWatcher&) = delete;
  ConfigWatcher& operator=(const ConfigWatcher&) = delete;

  // Starts the thread. `reference` is the content the owner loaded last (a change between that
  // load and start() is then reported); without it the file's current content is the reference.
  void start(std::optional<std::string> reference = std::nullopt);
  // Stops and joins the thread (waits for a callback in progress).
  void stop();

 private:
  void run();
  void watchFile();
  bool contentChanged();

  std::string path_;
  Callback onChange_;
  ConfigWatcherOptions options_;
  std::string content_;  // as last reported
  bool retry_ = false;   // the last callback returned false
  int inotify_ = -1;
  int signal_ = -1;
  int wakeup_ = -1;  // eventfd: stop()
  std::thread thread_;
};

}  // namespace gpuscale::adapter
