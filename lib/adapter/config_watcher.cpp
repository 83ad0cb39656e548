#include "gpuscale/adapter/config_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "gpuscale/core/files.h"

namespace gpuscale::adapter {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kFolderEvents =
    IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE | IN_ATTRIB;
constexpr uint32_t kFileEvents =
    IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;

std::string folderOf(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The file's bytes; an unreadable file reads as empty (the reload reports why).
std::string readAll(const std::string& path) { return core::readFile(path).valueOr(""); }

void drain(int fd) {
  std::array<char, 4096> buffer;
  while (::read(fd, buffer.data(), buffer.size()) > 0) {
  }
}

int millisUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

}  // namespace

ConfigWatcher::ConfigWatcher(std::string path, Callback onChange, ConfigWatcherOptions options)
    : path_(std::move(path)), onChange_(std::move(onChange)), options_(options) {}

ConfigWatcher::~ConfigWatcher() { stop(); }

void ConfigWatcher::start(std::optional<std::string> reference) {
  if (thread_.joinable()) return;
  content_ = reference ? std::move(*reference) : readAll(path_);
  wakeup_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_ < 0 || ::inotify_add_watch(inotify_, folderOf(path_).c_str(), kFolderEvents) < 0) {
    spdlog::warn("unable to watch {} with inotify ({}): checking it every {} s instead", path_,
                 std::strerror(errno),
                 std::chrono::duration_cast<std::chrono::seconds>(options_.pollInterval).count());
  }
  watchFile();
  if (options_.sighup) {
    sigset_t hangup;
    sigemptyset(&hangup);
    sigaddset(&hangup, SIGHUP);
    signal_ = ::signalfd(-1, &hangup, SFD_NONBLOCK | SFD_CLOEXEC);
    if (signal_ < 0) spdlog::warn("unable to receive SIGHUP: {}", std::strerror(errno));
  }
  thread_ = std::thread([this] { run(); });
}

void ConfigWatcher::stop() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    if (::write(wakeup_, &one, sizeof one) < 0) spdlog::warn("unable to stop the config watcher");
    thread_.join();
  }
  for (int* fd : {&inotify_, &signal_, &wakeup_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

// The file named in --config resolved through its symlinks: re-added after every event, because a
// swap makes it a different file (adding the same file again is a no-op).
void ConfigWatcher::watchFile() {
  if (inotify_ >= 0) ::inotify_add_watch(inotify_, path_.c_str(), kFileEvents);
}

bool ConfigWatcher::contentChanged() {
  std::string now = readAll(path_);
  if (now == content_ && !retry_) return false;
  content_ = std::move(now);
  return true;
}

void ConfigWatcher::run() {
  bool settling = false;  // a burst of events is settling until settleUntil
  Clock::time_point settleUntil = Clock::now();
  Clock::time_point nextPoll = Clock::now() + options_.pollInterval;
  while (true) {
    std::array<pollfd, 3> fds = {pollfd{wakeup_, POLLIN, 0}, pollfd{inotify_, POLLIN, 0},
                                 pollfd{signal_, POLLIN, 0}};
    int timeout = millisUntil(settling ? std::min(settleUntil, nextPoll) : nextPoll);
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      spdlog::error("config watcher: poll failed: {}", std::strerror(errno));
      return;
    }
    if (fds[0].revents != 0) return;
    std::optional<Trigger> trigger;
    if (fds[2].revents != 0) {
      drain(signal_);
      spdlog::info("SIGHUP: reloading {}", path_);
      content_ = readAll(path_);
      trigger = Trigger::kSignal;
    }
    if (fds[1].revents != 0) {
      drain(inotify_);
      watchFile();
      settling = true;
      settleUntil = Clock::now() + options_.settle;
    }
    const auto now = Clock::now();
    const bool settled = settling && now >= settleUntil;
    if (!trigger && (settled || now >= nextPoll)) {
      if (settled) settling = false;
      if (now >= nextPoll) nextPoll = now + options_.pollInterval;
      if (contentChanged()) trigger = Trigger::kFileChanged;
    }
    if (trigger) retry_ = !onChange_(*trigger);
  }
}

}  // namespace gpuscale::adapter
