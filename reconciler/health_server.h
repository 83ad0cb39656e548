// A small plain-HTTP listener for /healthz, /readyz, /metrics and /plan (the last plan as JSON), on
// a bind address flag. One thread; one request per connection (Connection: close): it serves
// probes and scrapes, not traffic.
//
// Thread safety: start/stop from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "gpuscale/core/result.h"

namespace gpuscale::reconciler {

struct HttpAnswer {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};

class HealthServer {
 public:
  using Handler = std::function<HttpAnswer(const std::string& path)>;
  explicit HealthServer(Handler handler);
  ~HealthServer();
  // Binds "host:port" (port 0 picks one) and starts serving.
  core::Status start(const std::string& address);
  uint16_t port() const { return port_; }
  void stop();

 private:
  struct State;
  Handler handler_;
  std::shared_ptr<State> state_;
  uint16_t port_ = 0;
  std::jthread thread_;
};

}  // namespace gpuscale::reconciler
