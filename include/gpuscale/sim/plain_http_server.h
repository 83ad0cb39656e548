// PlainHttpServer: a small HTTP/1.1 server on a loopback port for gpuscale-sim's own endpoints
// (/metrics, /healthz) — plain HTTP, one request per connection, one thread. Port 0 picks a free
// port (port() tells which).
//
// Thread safety: the handler runs on the server's thread; start/stop from one thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "gpuscale/core/result.h"

namespace gpuscale::sim {

struct HttpReply {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpReply(std::string_view target)>;

class PlainHttpServer {
 public:
  static core::Result<std::unique_ptr<PlainHttpServer>> start(const std::string& host,
                                                              unsigned short port,
                                                              HttpHandler handler);
  ~PlainHttpServer();  // stops
  unsigned short port() const;
  void stop();

 private:
  struct Impl;
  explicit PlainHttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscale::sim
