// Private: the degraded modes of the servers (https_server.h, plain_http_listener.h), each logged
// (the first time, then at most once per kLogInterval with the count since) and counted.
//
// Series carry the listener's name ("secure", "plain", "probes", ...). Without a registry the
// counts are kept only in the log lines (tests, fixture servers). Several servers may register on
// one registry (the reconciler's probe and status listeners): they share the families.
//
// Thread safety: thread-safe (prometheus-cpp metrics, a mutex for the log limiter).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace prometheus {
class Counter;
class Gauge;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace gpuscale::apiserver::detail {

enum class RequestRefusal;

// Which deadline closed a connection (https_server.h, "Deadlines").
enum class ConnectionDeadline {
  kFirstRequest,  // TLS handshake and the first byte of the first request
  kRequestRead,   // a request, once its first byte arrived
  kWrite,         // a response
};

// Logs a warning the first time, then at most once per interval with how many were not logged.
class RateLimitedWarning {
 public:
  static constexpr std::chrono::minutes kLogInterval{5};
  // `text` is the message; the limiter appends the count of occurrences not logged since.
  void warn(const std::string& key, std::string_view text);

 private:
  struct Entry {
    std::chrono::steady_clock::time_point last;
    uint64_t suppressed = 0;
  };
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

class ServerMetrics {
 public:
  ServerMetrics() = default;
  // Registers the families on `registry` (once; later calls are ignored).
  void registerOn(prometheus::Registry& registry);

  // A 429 for want of an in-flight slot.
  void requestRejected(unsigned limit);
  // A 504 for a request past the request timeout.
  void requestTimedOut(long long timeoutMs);
  // A connection closed at accept on `listener` because `limit` connections were open on it
  // (`perSource`: from its source address).
  void connectionRejected(std::string_view listener, bool perSource, size_t limit);
  // A request answered 431/413/400 (or 503 on a probe-only connection) and its connection closed.
  void requestRefused(std::string_view listener, RequestRefusal refusal);
  void probeOnlyRefused(std::string_view listener);
  // A connection closed by one of its deadlines.
  void connectionTimedOut(std::string_view listener, ConnectionDeadline deadline);
  // An exception escaped a connection's or the acceptor's handler (the connection is dropped, the
  // server goes on).
  void internalError(std::string_view where, std::string_view what);
  // The gauges.
  void setOpenConnections(std::string_view listener, size_t open);
  void setAdmittedRequests(unsigned admitted);

 private:
  prometheus::Counter* counter(prometheus::Family<prometheus::Counter>* family,
                               std::map<std::string, std::string> labels);

  prometheus::Counter* rejectedRequests_ = nullptr;
  prometheus::Counter* timeouts_ = nullptr;
  prometheus::Family<prometheus::Counter>* rejectedConnections_ = nullptr;
  prometheus::Family<prometheus::Counter>* refusedRequests_ = nullptr;
  prometheus::Family<prometheus::Counter>* connectionTimeouts_ = nullptr;
  prometheus::Family<prometheus::Counter>* internalErrors_ = nullptr;
  prometheus::Family<prometheus::Gauge>* openConnections_ = nullptr;
  prometheus::Gauge* admittedRequests_ = nullptr;
  RateLimitedWarning warnings_;
};

}  // namespace gpuscale::apiserver::detail
