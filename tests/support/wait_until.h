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

}  // namespace gpuscale::testing
