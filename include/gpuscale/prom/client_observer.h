// ClientObserver: what a Prometheus client's calls report, so a program can export them on
// /metrics without the client depending on a metrics library (client_metrics.h is the
// prometheus-cpp implementation the adapter and the reconciler use; observed_client.h is the
// decorator that reports).
//
// Calls come from the threads that complete requests, often concurrently; implementations must be
// thread-safe and cheap (no I/O, no blocking).
#pragma once

#include <chrono>
#include <string_view>

namespace gpuscale::prom {

class ClientObserver {
 public:
  using Seconds = std::chrono::duration<double>;
  virtual ~ClientObserver() = default;

  // One call that reached the observed client finished. `endpoint` is "query", "series",
  // "label_values" or "labels"; `result` is "success", the failure class (failureKindName(), e.g.
  // "timeout", "connection failed") or "other".
  virtual void callDone(std::string_view endpoint, std::string_view result, Seconds latency) = 0;
};

}  // namespace gpuscale::prom
