// PlainHttpListener: a program's own plain-HTTP endpoints that need no credentials (the
// reconciler's health probes, the emulator's health and exporter endpoints). It authenticates
// nobody: pages that reveal cluster state belong on auth::SecureStatusServer instead.
//
// It is one listener of the serving machinery HttpsServer uses (https_server.h), with the same
// request parser and limits (431/413/400 and a close for a request that does not fit), deadlines
// that fire (the first request byte within firstRequestTimeout of accept, a started request within
// requestReadTimeout, a response within writeTimeout), connection caps (`connections`: overall,
// per source address, and room kept beyond the cap for health probes) and exception guards, each
// degraded mode logged and counted (gpuscale_apiserver_* series with listener=`name`, on
// `registry` when given). Every connection is served asynchronously by one I/O thread, so a
// silent or slow client holds only its own connection; the handler runs on that thread too and
// must be quick (a probe answer, a metrics exposition).
//
// One request per connection: every response says Connection: close (kubelet probes and scrapers
// open a connection per request anyway, and an idle connection then costs nothing).
//
// The handler sees the request's percent-decoded path without its query string.
//
// stop() stops accepting, closes connections without a request in flight and gives the others up
// to shutdownTimeout; then it drops whatever is left. So a program whose probes are held open by
// clients still ends within its grace period.
//
// Thread safety: start/stop from one thread; port() from any. The handler runs on the listener's
// I/O thread.
#pragma once

#include <prometheus/registry.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/core/plain_http.h"
#include "gpuscale/core/result.h"

namespace gpuscale::apiserver {

struct PlainListenerOptions {
  // The listener label of its gpuscale_apiserver_* series ("probes", "http", ...).
  std::string name = "probes";
  ListenerLimits connections{64, 16, 8};
  RequestLimits requestLimits;
  std::chrono::milliseconds firstRequestTimeout{5'000};
  std::chrono::milliseconds requestReadTimeout{5'000};
  std::chrono::milliseconds writeTimeout{10'000};
  std::chrono::milliseconds shutdownTimeout{2'000};
  // Where the degraded modes are counted; null: logged only.
  std::shared_ptr<prometheus::Registry> registry;
};

class PlainHttpListener {
 public:
  // Listens on `host`:`port` (0: a free port) and serves until stop(). A bad address or a failed
  // bind is an error.
  static core::Result<std::unique_ptr<PlainHttpListener>> start(const std::string& host,
                                                                std::uint16_t port,
                                                                core::PlainHttpHandler handler,
                                                                PlainListenerOptions options = {});
  // The same from "HOST:PORT".
  static core::Result<std::unique_ptr<PlainHttpListener>> start(std::string_view hostPort,
                                                                core::PlainHttpHandler handler,
                                                                PlainListenerOptions options = {});

  ~PlainHttpListener();  // stops
  PlainHttpListener(const PlainHttpListener&) = delete;
  PlainHttpListener& operator=(const PlainHttpListener&) = delete;

  std::uint16_t port() const;
  // Open connections (tests).
  size_t openConnections() const;
  // See above; safe to call more than once.
  void stop();

 private:
  struct Impl;
  explicit PlainHttpListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscale::apiserver
