// Waiting for the signals that stop (or reload) a program, the one way every program does it.
//
// A program builds StopSignals first thing in main's command, before any thread starts: the
// signals are then blocked in every thread (threads inherit the mask), so they stay pending until
// wait() takes them synchronously. No async-signal handler runs, so nothing but wait() and
// readers that ask for them (the rule file watcher's signalfd for SIGHUP) ever sees them.
//
// Thread safety: build on the main thread before other threads exist; wait() from one thread.
#pragma once

#include <csignal>
#include <functional>
#include <initializer_list>

namespace gpuscale::core {

class StopSignals {
 public:
  // Blocks `stopSignals` (and `alsoBlocked`, which are not waited for: another reader takes them).
  explicit StopSignals(std::initializer_list<int> stopSignals = {SIGTERM, SIGINT},
                       std::initializer_list<int> alsoBlocked = {});

  // Blocks until one of the stop signals arrives and returns it; or, when `stopEarly` is given,
  // returns 0 once it answers true (polled every 200 ms), for programs that also stop on their own
  // (a lost leader lease).
  int wait(const std::function<bool()>& stopEarly = {}) const;

 private:
  sigset_t waited_{};
};

}  // namespace gpuscale::core
