// Child processes for tests: run a command to completion and capture its output, or start a
// long-running one (a server) and signal or stop it later. Commands are argv vectors, never shell
// strings.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gpuscale::testing {

struct ProcessResult {
  int exitCode = -1;  // -1 when killed by a signal or timed out
  bool timedOut = false;
  std::string out;
  std::string err;
};

// Runs argv[0] (looked up in PATH) with `input` on stdin; kills it after `timeout`.
ProcessResult runProcess(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30),
                         const std::string& input = "");

// A background process whose stdout+stderr go to a log file. Killed (SIGKILL) on destruction if
// still running.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const std::string& logFile);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  void signal(int signo);
  // Waits for exit; the exit code, or nullopt on timeout (-signal when killed by a signal).
  std::optional<int> wait(std::chrono::milliseconds timeout);
  std::string log() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::string logFile_;
};

// Does `program` exist in PATH (or as a path)?
bool programAvailable(const std::string& program);

}  // namespace gpuscale::testing
