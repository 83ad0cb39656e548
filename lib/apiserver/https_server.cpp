#include "gpuscale/apiserver/https_server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <thread>
#include <vector>

#include "handler_pool.h"
#include "http_session.h"
#include "server_metrics.h"

namespace gpuscale::apiserver {

using detail::ListenerContext;
using detail::tcp;
namespace net = boost::asio;

namespace {

// Threads that run accept, TLS and HTTP I/O; handlers run on the HandlerPool's threads.
constexpr unsigned kIoThreads = 2;

// Accepts connections of one listener and starts a Connection<kTls> for each.
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

  // Starts a connection, unless the listener is full. Whatever fails here (no memory for the TLS
  // state, ...) drops this connection, never the acceptor.
  void admit(tcp::socket socket) noexcept {
    boost::system::error_code ec;
    try {
      const size_t limit = context_.options->maxConnections;
      if (limit != 0 && context_.registry->size() >= limit) {
        // Closed before any TLS work: a flood of connections costs a descriptor for an instant,
        // not a handshake and buffers each.
        context_.metrics->connectionRejected(context_.name, false, limit);
        socket.close(ec);
        return;
      }
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<detail::Connection<kTls>>(std::move(socket), context_)->run();
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

// Runs the io_context until it is stopped. An exception out of a completion handler (each
// connection's handlers catch their own, so this is a last guard) drops that handler's connection;
// the thread logs, counts and runs on.
void runGuarded(net::io_context& io, detail::ServerMetrics& metrics) {
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& error) {
      metrics.internalError("I/O", error.what());
    } catch (...) {
      metrics.internalError("I/O", "unknown exception");
    }
  }
}

}  // namespace

struct HttpsServer::State {
  ServerOptions options;
  TlsConfig tls;
  std::shared_ptr<ServingTls> servingTls;
  HttpHandler secureHandler;
  HttpHandler plainHandler;
  AsyncHttpHandler asyncHandler;
  std::shared_ptr<detail::ServerMetrics> metrics = std::make_shared<detail::ServerMetrics>();
  net::io_context io;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::shared_ptr<detail::ConnectionRegistry> registry =
      std::make_shared<detail::ConnectionRegistry>(metrics);
  // Declared after `io`: destroyed first, with the queued work that holds connections.
  // Shared: parked requests (pending_request.h) refer to it weakly.
  std::shared_ptr<detail::HandlerPool> pool;
  std::shared_ptr<Listener<true>> secure;
  std::shared_ptr<Listener<false>> plain;
  std::vector<std::thread> workers;
  bool running = false;
};

HttpsServer::HttpsServer(ServerOptions options, TlsConfig tls, HttpHandler secureHandler,
                         HttpHandler plainHandler)
    : state_(std::make_shared<State>()) {
  state_->options = std::move(options);
  state_->tls = std::move(tls);
  state_->secureHandler = std::move(secureHandler);
  state_->plainHandler = std::move(plainHandler);
}

HttpsServer::HttpsServer(ServerOptions options, std::shared_ptr<ServingTls> tls,
                         HttpHandler secureHandler, HttpHandler plainHandler)
    : HttpsServer(std::move(options), TlsConfig{}, std::move(secureHandler),
                  std::move(plainHandler)) {
  state_->servingTls = std::move(tls);
}

HttpsServer::~HttpsServer() { shutdown(std::chrono::milliseconds(0)); }

core::Status HttpsServer::start() {
  State& s = *state_;
  if (s.running) return core::Status::invalid("server already started");
  if (!s.servingTls) {
    auto fixed = ServingTls::create([tls = s.tls]() -> core::Result<TlsConfig> { return tls; });
    if (!fixed) return fixed.status();
    s.servingTls = std::move(*fixed);
  }

  s.pool = std::make_shared<detail::HandlerPool>(s.options.workerThreads,
                                                 s.options.maxRequestsInFlight, s.metrics);
  ListenerContext secureContext{"secure",     &s.options,   &s.secureHandler, s.registry,
                                s.servingTls, s.pool.get(), s.metrics.get()};
  if (s.asyncHandler) secureContext.asyncHandler = &s.asyncHandler;
  s.secure = std::make_shared<Listener<true>>(s.io, secureContext);
  if (auto status = s.secure->listen(s.options.bindAddress, s.options.securePort); !status.ok()) {
    return status;
  }
  if (!s.options.metricsBindAddress.empty()) {
    auto address = splitHostPort(s.options.metricsBindAddress);
    if (!address) return address.status();
    if (!s.plainHandler)
      return core::Status::invalid("plain listener configured without a handler");
    ListenerContext plainContext{"plain", &s.options, &s.plainHandler, s.registry,
                                 nullptr, nullptr,    s.metrics.get()};
    s.plain = std::make_shared<Listener<false>>(s.io, plainContext);
    if (auto status = s.plain->listen(address->first, address->second); !status.ok()) return status;
  }

  s.work.emplace(s.io.get_executor());
  s.secure->start();
  if (s.plain) s.plain->start();
  for (unsigned i = 0; i < kIoThreads; ++i) {
    s.workers.emplace_back([&io = s.io, metrics = s.metrics] { runGuarded(io, *metrics); });
  }
  s.running = true;
  return {};
}

uint16_t HttpsServer::securePort() const { return state_->secure ? state_->secure->port() : 0; }

uint16_t HttpsServer::plainPort() const { return state_->plain ? state_->plain->port() : 0; }

size_t HttpsServer::openConnections() const { return state_->registry->size(); }

void HttpsServer::shutdown(std::chrono::milliseconds deadline) {
  State& s = *state_;
  if (!s.running) return;
  s.running = false;
  const auto until = std::chrono::steady_clock::now() + deadline;
  s.registry->stopping.store(true);
  s.secure->close();
  if (s.plain) s.plain->close();
  s.registry->closeAll();
  s.registry->waitUntilEmpty(until);
  // Whatever is still open after the deadline is dropped with the io_context's pending work.
  s.work.reset();
  s.io.stop();
  for (auto& worker : s.workers) worker.join();
  s.workers.clear();
  // Handlers still running (a slow backend) are waited for; queued ones are dropped.
  if (s.pool) s.pool->stop();
}

void HttpsServer::setAsyncHandler(AsyncHttpHandler handler) {
  state_->asyncHandler = std::move(handler);
}

void HttpsServer::setMetricsRegistry(const std::shared_ptr<prometheus::Registry>& registry) {
  if (registry) state_->metrics->registerOn(*registry);
}

}  // namespace gpuscale::apiserver
