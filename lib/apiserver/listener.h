// Private: what the servers (HttpsServer, PlainHttpListener) share beyond one connection: the
// acceptor of a listener with its connection budget, and the I/O loop (the io_context, the threads
// that run it, graceful stop).
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "connection_budget.h"
#include "http_session.h"
#include "server_metrics.h"

namespace gpuscale::apiserver::detail {

// Accepts connections of one listener and starts a Connection<kTls> for each that its budget
// admits (connection_budget.h); the others are closed at once, before any TLS work.
template <bool kTls>
class Listener : public std::enable_shared_from_this<Listener<kTls>> {
 public:
  Listener(net::io_context& io, ListenerContext context)
      : io_(io),
        acceptor_(net::make_strand(io)),
        retry_(acceptor_.get_executor()),
        context_(std::move(context)) {}

  core::Status listen(const std::string& host, uint16_t port) {
    boost::system::error_code ec;
    const auto address = net::ip::make_address(host, ec);
    if (ec) return core::Status::invalid("bad bind address \"" + host + "\"");
    const tcp::endpoint endpoint(address, port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      return core::Status::invalid("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                                   ec.message());
    }
    port_ = acceptor_.local_endpoint().port();
    return {};
  }

  void start() { accept(); }

  void close() {
    net::post(acceptor_.get_executor(), [self = this->shared_from_this()] {
      boost::system::error_code ec;
      self->acceptor_.close(ec);
      self->retry_.cancel();
    });
  }

  uint16_t port() const { return port_; }

 private:
  void accept() {
    acceptor_.async_accept(
        net::make_strand(io_),
        [self = this->shared_from_this()](boost::system::error_code ec, tcp::socket socket) {
          if (!ec) {
            self->admit(std::move(socket));
            return self->accept();
          }
          if (!self->acceptor_.is_open() || self->context_.registry->stopping.load()) return;
          // Out of descriptors or similar: back off briefly instead of spinning.
          self->retry_.expires_after(std::chrono::milliseconds(50));
          self->retry_.async_wait([self](boost::system::error_code waitError) {
            if (!waitError) self->accept();
          });
        });
  }

  // Starts a connection if the budget admits it. Whatever fails here (no memory for the TLS state,
  // ...) drops this connection, never the acceptor.
  void admit(tcp::socket socket) noexcept {
    boost::system::error_code ec;
    try {
      const auto endpoint = socket.remote_endpoint(ec);
      const std::string source = ec ? std::string() : endpoint.address().to_string();
      ConnectionBudget::Ticket ticket;
      const Admission admission = context_.budget->admit(source, ticket);
      if (admission == Admission::kListenerFull || admission == Admission::kSourceFull) {
        const bool perSource = admission == Admission::kSourceFull;
        const ListenerLimits& limits = context_.budget->limits();
        context_.metrics->connectionRejected(
            context_.name, perSource, perSource ? limits.maxPerSource : limits.maxConnections);
        socket.close(ec);
        return;
      }
      socket.set_option(tcp::no_delay(true), ec);
      const std::string remote = source + ":" + std::to_string(endpoint.port());
      std::make_shared<Connection<kTls>>(std::move(socket), context_, std::move(ticket),
                                         admission == Admission::kProbeOnly, remote)
          ->run();
    } catch (const std::exception& error) {
      context_.metrics->internalError("accept", error.what());
      socket.close(ec);
    }
  }

  net::io_context& io_;
  tcp::acceptor acceptor_;
  net::steady_timer retry_;
  ListenerContext context_;
  uint16_t port_ = 0;
};

// A server's io_context, the threads that run it and its open connections.
//
// Thread safety: start() and stop() from one controlling thread.
class IoLoop {
 public:
  explicit IoLoop(std::shared_ptr<ServerMetrics> metrics);
  ~IoLoop();
  IoLoop(const IoLoop&) = delete;
  IoLoop& operator=(const IoLoop&) = delete;

  net::io_context& io() { return io_; }
  const std::shared_ptr<ConnectionRegistry>& registry() const { return registry_; }

  // Runs the io_context on `threads` threads. An exception out of a completion handler (every
  // connection's handlers catch their own, so this is a last guard) drops that handler's
  // connection; the thread logs, counts and runs on.
  void start(unsigned threads);
  // Graceful stop: `closeListeners` stops accepting; connections without a request in flight close
  // at once, the others after their response; after `deadline` whatever is left is dropped.
  // Returns once the threads are joined. Safe to call more than once.
  void stop(const std::function<void()>& closeListeners, std::chrono::milliseconds deadline);
  bool running() const { return !threads_.empty(); }

 private:
  std::shared_ptr<ServerMetrics> metrics_;
  net::io_context io_;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::shared_ptr<ConnectionRegistry> registry_;
  std::vector<std::thread> threads_;
};

}  // namespace gpuscale::apiserver::detail
