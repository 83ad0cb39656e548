// Polls a condition until it holds or a deadline passes (for readiness of servers started by tests;
// never used to assert how fast something is).
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace gpuscale::testing {

inline bool waitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds interval = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(interval);
  }
}

// Polls `done` every 5 ms for up to 10 s: for tests of components that work on their own threads
// (informers, controllers).
inline bool eventually(const std::function<bool()>& done) {
  return waitUntil(done, std::chrono::seconds(10), std::chrono::milliseconds(5));
}

}  // namespace gpuscale::testing
