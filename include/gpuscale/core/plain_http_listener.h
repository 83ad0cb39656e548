// PlainHttpListener: the one small plain-HTTP listener for a program's own endpoints that need no
// credentials (health probes, the emulator's exporter). It authenticates nobody: pages that reveal
// cluster state (the reconciler's /plan, /leader, /metrics) belong on auth::SecureStatusServer
// instead. It is not the API server (lib/apiserver serves HTTPS traffic): one thread, one request
// per connection (Connection: close), a read deadline per connection so a silent client cannot hold
// the thread. Port 0 picks a free port (port() tells which).
//
// The handler sees the request path without its query string and runs on the listener's thread.
//
// Thread safety: start/stop from one thread; port() from any.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gpuscale/core/result.h"

namespace gpuscale::core {

struct PlainHttpReply {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};

using PlainHttpHandler = std::function<PlainHttpReply(std::string_view path)>;

// Splits "HOST:PORT" (the last colon; "[::1]:80" keeps its brackets off); nullopt when malformed.
std::optional<std::pair<std::string, std::uint16_t>> parseHostPort(std::string_view text);

class PlainHttpListener {
 public:
  // Listens on `host`:`port` and serves until stop(). A bad address or a failed bind is an error.
  static Result<std::unique_ptr<PlainHttpListener>> start(
      const std::string& host, std::uint16_t port, PlainHttpHandler handler,
      std::chrono::seconds readTimeout = std::chrono::seconds(5));
  // The same from "HOST:PORT".
  static Result<std::unique_ptr<PlainHttpListener>> start(std::string_view hostPort,
                                                          PlainHttpHandler handler);

  ~PlainHttpListener();  // stops
  PlainHttpListener(const PlainHttpListener&) = delete;
  PlainHttpListener& operator=(const PlainHttpListener&) = delete;

  std::uint16_t port() const;
  void stop();

 private:
  struct Impl;
  explicit PlainHttpListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscale::core
