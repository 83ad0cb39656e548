#include "gpuscale/adapter/config_watcher.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace gpuscale::adapter {
namespace config_watcher_test {

namespace fs = std::filesystem;
constexpr auto kPatience = std::chrono::seconds(20);  // how long an event may take to arrive

void writeFile(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Records what the watcher reported and the file's content at that moment.
struct Recorder {
  std::mutex mutex;
  std::vector<std::pair<ConfigWatcher::Trigger, std::string>> calls;
  std::atomic<int> count{0};
  std::atomic<int> failuresLeft{0};  // answer false this many times

  ConfigWatcher::Callback callback(const fs::path& file) {
    return [this, file](ConfigWatcher::Trigger trigger) {
      {
        std::lock_guard lock(mutex);
        calls.emplace_back(trigger, readFile(file));
      }
      ++count;
      return failuresLeft.fetch_sub(1) <= 0;
    };
  }
  std::string lastContent() {
    std::lock_guard lock(mutex);
    return calls.empty() ? "" : calls.back().second;
  }
};

// A ConfigMap volume as the kubelet lays it out: the file is a symlink through `..data`, which
// points to a timestamped folder; an update writes a new folder and renames a new `..data` over
// the old one.
class ConfigMapVolume {
 public:
  explicit ConfigMapVolume(const fs::path& root) : root_(root) {
    publish("rules: [a]\n");
    fs::create_symlink("..data/config.yaml", root_ / "config.yaml");
  }
  void publish(const std::string& content) {
    const std::string folder = "..2026_11_22_" + std::to_string(++generation_);
    fs::create_directory(root_ / folder);
    writeFile(root_ / folder / "config.yaml", content);
    fs::create_symlink(folder, root_ / "..data_tmp");
    fs::rename(root_ / "..data_tmp", root_ / "..data");
    if (!previous_.empty()) fs::remove_all(root_ / previous_);
    previous_ = folder;
  }
  fs::path file() const { return root_ / "config.yaml"; }

 private:
  fs::path root_;
  int generation_ = 0;
  std::string previous_;
};

ConfigWatcherOptions inotifyOnly() {
  ConfigWatcherOptions options;
  options.pollInterval = std::chrono::hours(1);  // so only inotify can report in time
  options.sighup = false;
  return options;
}

TEST(ConfigWatcher, SeesConfigMapSymlinkSwaps) {
  testing::TempDir dir;
  ConfigMapVolume volume(dir.path());
  Recorder recorder;
  ConfigWatcher watcher(volume.file().string(), recorder.callback(volume.file()), inotifyOnly());
  watcher.start();

  volume.publish("rules: [b]\n");
  ASSERT_TRUE(testing::waitUntil([&] { return recorder.count >= 1; }, kPatience));
  EXPECT_EQ(recorder.lastContent(), "rules: [b]\n");
  EXPECT_EQ(recorder.calls.front().first, ConfigWatcher::Trigger::kFileChanged);

  // The second swap is seen too: the watch follows the file to its new folder.
  volume.publish("rules: [c]\n");
  ASSERT_TRUE(
      testing::waitUntil([&] { return recorder.lastContent() == "rules: [c]\n"; }, kPatience));
  watcher.stop();
}

TEST(ConfigWatcher, SeesInPlaceWritesAndRenamesButNotUnchangedContent) {
  testing::TempDir dir;
  const fs::path file = dir.path() / "rules.yaml";
  writeFile(file, "one\n");
  Recorder recorder;
  ConfigWatcher watcher(file.string(), recorder.callback(file), inotifyOnly());
  watcher.start();

  writeFile(file, "one\n");  // same bytes: not a change
  writeFile(dir.path() / "other.txt", "unrelated\n");
  writeFile(file, "two\n");
  ASSERT_TRUE(testing::waitUntil([&] { return recorder.lastContent() == "two\n"; }, kPatience));
  writeFile(dir.path() / "rules.yaml.tmp", "three\n");
  fs::rename(dir.path() / "rules.yaml.tmp", file);
  ASSERT_TRUE(testing::waitUntil([&] { return recorder.lastContent() == "three\n"; }, kPatience));
  watcher.stop();
  for (const auto& [trigger, content] : recorder.calls) EXPECT_NE(content, "one\n");
}

TEST(ConfigWatcher, PollsWithoutEventsAndRetriesWhatWasNotApplied) {
  testing::TempDir dir;
  const fs::path file = dir.path() / "rules.yaml";
  writeFile(file, "one\n");
  Recorder recorder;
  recorder.failuresLeft = 2;
  ConfigWatcherOptions options;
  options.pollInterval = std::chrono::milliseconds(20);
  options.sighup = false;
  ConfigWatcher watcher(file.string(), recorder.callback(file), options);
  watcher.start();
  writeFile(dir.path() / "next.tmp", "two\n");
  fs::rename(dir.path() / "next.tmp", file);  // atomic: no half-written content to report
  // Reported, refused twice, then accepted: three calls with the same content, then none.
  ASSERT_TRUE(testing::waitUntil([&] { return recorder.count >= 3; }, kPatience));
  watcher.stop();
  ASSERT_EQ(recorder.count, 3);
  for (const auto& [trigger, content] : recorder.calls) EXPECT_EQ(content, "two\n");
}

TEST(ConfigWatcher, ReportsSighupWhateverTheContent) {
  // SIGHUP blocked in this thread before the watcher's starts, as the adapter does at start.
  sigset_t hangup;
  sigemptyset(&hangup);
  sigaddset(&hangup, SIGHUP);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &hangup, nullptr), 0);
  testing::TempDir dir;
  const fs::path file = dir.path() / "rules.yaml";
  writeFile(file, "same\n");
  Recorder recorder;
  ConfigWatcherOptions options = inotifyOnly();
  options.sighup = true;
  ConfigWatcher watcher(file.string(), recorder.callback(file), options);
  watcher.start();
  ASSERT_EQ(kill(getpid(), SIGHUP), 0);
  ASSERT_TRUE(testing::waitUntil([&] { return recorder.count >= 1; }, kPatience));
  watcher.stop();
  EXPECT_EQ(recorder.calls.front().first, ConfigWatcher::Trigger::kSignal);
  EXPECT_EQ(recorder.calls.front().second, "same\n");
}

}  // namespace config_watcher_test
}  // namespace gpuscale::adapter
