// ClientObserver: what the Kubernetes client and its informers report about their traffic, so a
// program can export it on /metrics without this module depending on a metrics library
// (kube/client_metrics.h is the Prometheus implementation the adapter and the reconciler use).
//
// Calls come from the threads that make the requests (callers' threads, informer threads), often
// concurrently; implementations must be thread-safe and cheap (no I/O, no blocking).
//
// Labels are bounded: `verb` is one of get, list, watch, create, update, patch, delete; `resource`
// is passed through boundedResourceLabel() by the client, so an adapter that lists arbitrary
// discovered resources (CRDs) cannot grow the label set without limit.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace gpuscale::kube {

class ClientObserver {
 public:
  using Seconds = std::chrono::duration<double>;
  virtual ~ClientObserver() = default;

  // One HTTP exchange (each 429 retry is its own); `code` is the HTTP status, 0 when no response
  // arrived (connection refused, timeout, cancelled). A watch reports when its response headers
  // arrive (the stream's length is not a latency).
  virtual void requestDone(std::string_view verb, std::string_view resource, int code,
                           Seconds latency) = 0;
  // Time a request waited for the client-side rate limiter (--client-qps/--client-burst).
  virtual void rateLimiterWaited(Seconds wait) = 0;
  // An informer opened a watch: the first after a LIST or a resumption after the stream ended.
  virtual void watchStarted(std::string_view resource) = 0;
  // An informer's watch got 410 Gone (its resourceVersion was compacted) and it relists.
  virtual void relistedAfterGone(std::string_view resource) = 0;
  // An informer applied a complete LIST (initial sync or relist) to its cache.
  virtual void informerListed(std::string_view resource) = 0;
};

// The resource label for `resource` (a plural, lower-case name): the built-in kinds gpuscale
// works with keep their name, "discovery" stays, anything else becomes "other".
std::string boundedResourceLabel(std::string_view resource);

// "2xx", "3xx", "4xx", "5xx", or "error" when no response arrived (code 0 or out of range).
std::string codeClass(int code);

}  // namespace gpuscale::kube
