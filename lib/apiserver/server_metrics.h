// Private: the degraded modes of HttpsServer (https_server.h), each logged once and counted.
//
// Without a registry the counts are kept only in the log-once flags (tests, fixture servers).
//
// Thread safety: thread-safe (prometheus-cpp metrics and atomics).
#pragma once

#include <atomic>
#include <memory>

namespace prometheus {
class Counter;
class Gauge;
class Registry;
}  // namespace prometheus

namespace gpuscale::apiserver::detail {

class ServerMetrics {
 public:
  ServerMetrics() = default;
  // Registers the families on `registry` (once; later calls are ignored).
  void registerOn(prometheus::Registry& registry);

  // A 429 for want of an in-flight slot.
  void requestRejected(unsigned limit);
  // A 504 for a request past the request timeout.
  void requestTimedOut(long long timeoutMs);
  // A connection closed at once because `limit` connections were open.
  void connectionRejected(size_t limit);
  // The gauges.
  void setOpenConnections(size_t open);
  void setAdmittedRequests(unsigned admitted);

 private:
  prometheus::Counter* rejectedRequests_ = nullptr;
  prometheus::Counter* timeouts_ = nullptr;
  prometheus::Counter* rejectedConnections_ = nullptr;
  prometheus::Gauge* openConnections_ = nullptr;
  prometheus::Gauge* admittedRequests_ = nullptr;
  std::atomic<bool> loggedRejectedRequest_{false};
  std::atomic<bool> loggedTimeout_{false};
  std::atomic<bool> loggedRejectedConnection_{false};
};

}  // namespace gpuscale::apiserver::detail
