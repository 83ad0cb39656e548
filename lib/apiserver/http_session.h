// Private: one HTTP/1.1 connection (TLS or plain) of the servers (HttpsServer's listeners,
// PlainHttpListener), and the registry of open connections that graceful shutdown walks.
#pragma once

#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "connection_budget.h"
#include "gpuscale/apiserver/https_server.h"
#include "gpuscale/apiserver/pending_request.h"
#include "gpuscale/apiserver/serving_tls.h"
#include "gpuscale/core/plain_http.h"
#include "handler_pool.h"
#include "pooled_pending_request.h"
#include "request_parser.h"
#include "server_metrics.h"
#include "tls_context.h"
#include "tls_socket_stream.h"

namespace gpuscale::apiserver::detail {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  // Asks the connection to finish: idle connections close now, busy ones after their current
  // response.
  virtual void requestClose() = 0;
};

// Open connections; shutdown() waits here until they are gone.
class ConnectionRegistry {
 public:
  // `metrics` (may be null) gets the number of open connections.
  explicit ConnectionRegistry(std::shared_ptr<ServerMetrics> metrics = nullptr)
      : metrics_(std::move(metrics)) {}
  // `listener` names the listener in the open-connections gauge (a string with static storage).
  uint64_t add(std::weak_ptr<ConnectionBase> connection, std::string_view listener);
  void remove(uint64_t id);
  // Calls requestClose() on every open connection.
  void closeAll();
  // Waits until no connection is open or `deadline` passes; true when none is left.
  bool waitUntilEmpty(std::chrono::steady_clock::time_point deadline);
  size_t size() const;

  std::atomic<bool> stopping{false};

 private:
  const std::shared_ptr<ServerMetrics> metrics_;
  mutable std::mutex mutex_;
  std::condition_variable empty_;
  struct Entry {
    std::weak_ptr<ConnectionBase> connection;
    std::string_view listener;
  };
  std::unordered_map<uint64_t, Entry> connections_;
  std::unordered_map<std::string_view, size_t> perListener_;
  uint64_t nextId_ = 1;
};

// What every connection of a listener shares.
struct ListenerContext {
  std::string_view name;  // "secure" or "plain": the listener label of its metrics
  const ServerOptions* options = nullptr;
  const HttpHandler* handler = nullptr;
  // Null: none. Requests it answers (without waiting) are answered on the I/O thread.
  const InlineHandler* inlineHandler = nullptr;
  std::shared_ptr<ConnectionRegistry> registry;
  // Null for the plain listener; each TLS connection takes the context current when it is accepted
  // and keeps it (a reload never touches open connections).
  std::shared_ptr<ServingTls> tls;
  // Null: every request is handled on the I/O thread (the plain /metrics listener). Otherwise
  // requests other than health probes (isHealthProbe) run there under the in-flight limit.
  HandlerPool* pool = nullptr;
  ServerMetrics* metrics = nullptr;
  // When set, requests that go to the pool are given to it instead of `handler` (health probes
  // still take `handler`): it may park them (pending_request.h).
  const AsyncHttpHandler* asyncHandler = nullptr;
  // The listener's connection caps (connection_budget.h).
  std::shared_ptr<ConnectionBudget> budget;
  // False: one request per connection (every response says Connection: close).
  bool keepAlive = true;
};

// /healthz, /livez or /readyz exactly (any query) without an Authorization header: answered on
// the I/O thread, ahead of queued work (see https_server.h for why these and no others).
bool isHealthProbe(const HttpRequest& request);

// 429 TooManyRequests (Retry-After: 1) and 504 Timeout, as Kubernetes Status bodies.
HttpResponse tooManyRequestsResponse();
HttpResponse requestTimeoutResponse(std::chrono::milliseconds timeout);

// The handler's response (a 500 if it threw).
HttpResponse callHandler(const HttpHandler& handler, const HttpRequest& request);
// The inline handler's response, nullopt when it did not answer (or threw: the request then takes
// the handler threads, which answer it).
std::optional<HttpResponse> callInlineHandler(const InlineHandler& handler,
                                              const HttpRequest& request);

// Plain-text answer to a request that could not be parsed ("400 Bad Request", "431 ...").
http::response<http::string_body> protocolError(http::status status);

// The answer on a probe-only connection (connection_budget.h) to anything but a health probe: 503
// with Retry-After: 1, plain text.
HttpResponse listenerFullResponse();

// A core::PlainHttpHandler (path in, reply out) as an HttpHandler (plain_http_listener.cpp).
HttpHandler adaptPlainHandler(core::PlainHttpHandler handler);

http::response<http::string_body> toBeastResponse(HttpResponse&& response, bool head);

template <bool kTls>
class Connection : public ConnectionBase, public std::enable_shared_from_this<Connection<kTls>> {
 public:
  // TLS: OpenSSL straight on the socket (tls_socket_stream.h: no record buffers while idle).
  using Stream = std::conditional_t<kTls, TlsSocketStream, beast::tcp_stream>;

  // `ticket` holds the connection's place in its listener's budget; a `probeOnly` connection serves
  // one health probe (connection_budget.h). `remoteAddress` is "address:port".
  Connection(tcp::socket&& socket, ListenerContext context, ConnectionBudget::Ticket ticket,
             bool probeOnly, std::string remoteAddress)
      : context_(std::move(context)),
        ticket_(std::move(ticket)),
        probeOnly_(probeOnly),
        firstRequestDeadline_(std::chrono::steady_clock::now() +
                              context_.options->firstRequestTimeout),
        tlsContext_(context_.tls ? context_.tls->current() : nullptr),
        stream_(makeStream(std::move(socket), tlsContext_.get())),
        buffer_(readBufferLimit(context_.options->requestLimits)),
        deadline_(stream_.get_executor()),
        remoteAddress_(std::move(remoteAddress)) {}

  ~Connection() override {
    if (id_ != 0) context_.registry->remove(id_);
  }

  void run() {
    // Registered before the first handler runs, so the open-connection count is exact at accept.
    id_ = context_.registry->add(this->weak_from_this(), context_.name);
    net::dispatch(stream_.get_executor(),
                  [self = this->shared_from_this()] { self->guarded([&] { self->start(); }); });
  }

  void requestClose() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      self->closeRequested_ = true;
      if (self->phase_ == Phase::kIdle || self->phase_ == Phase::kHandshake) {
        beast::get_lowest_layer(self->stream_).cancel();
      }
    });
  }

 private:
  enum class Phase { kHandshake, kIdle, kReading, kBusy, kClosing };

  static Stream makeStream(tcp::socket&& socket, net::ssl::context* tls) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *tls);
    } else {
      (void)tls;
      return Stream(std::move(socket));
    }
  }

  const ServerOptions& options() const { return *context_.options; }

  // Runs the body of a completion handler. Nothing in it should throw; if something does (a bug,
  // memory exhausted), this connection is dropped and counted, never the process.
  template <typename Body>
  void guarded(Body&& body) noexcept {
    try {
      body();
    } catch (const std::exception& error) {
      onInternalError(error.what());
    } catch (...) {
      onInternalError("unknown exception");
    }
  }

  void onInternalError(const char* what) noexcept {
    try {
      if (context_.metrics != nullptr) context_.metrics->internalError("connection", what);
    } catch (...) {
    }
    beast::error_code ec;
    lowest().socket().close(ec);
  }
  // The layer with the socket and the deadlines.
  decltype(auto) lowest() { return beast::get_lowest_layer(stream_); }

  void start() {
    if (context_.registry->stopping.load()) return closeSocket();
    if constexpr (kTls) {
      phase_ = Phase::kHandshake;
      // The handshake and the first request's first byte share one short deadline from accept.
      lowest().expires_at(firstRequestDeadline_);
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code error) {
                                self->guarded([&] { self->onHandshake(error); });
                              });
    } else {
      waitForRequest();
    }
  }

  void onHandshake(beast::error_code ec) {
    if (ec == beast::error::timeout) return closeForDeadline(ConnectionDeadline::kFirstRequest);
    if (ec) return closeSocket();
    if constexpr (kTls) peer_ = peerCertificates(stream_.native_handle());
    waitForRequest();
  }

  // Idle keep-alive wait for the first byte of the next request, then the request under its own
  // deadline.
  void waitForRequest() {
    if (closeRequested_ || context_.registry->stopping.load()) return closeGracefully();
    if (buffer_.size() > 0) return readRequest();
    phase_ = Phase::kIdle;
    if (firstRequest_) {
      lowest().expires_at(firstRequestDeadline_);
    } else {
      lowest().expires_after(options().idleTimeout);
    }
    // A small read: an idle connection holds no more than this (a request that does not fit is
    // read on by readRequest()).
    stream_.async_read_some(buffer_.prepare(kIdleReadBytes),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              self->guarded([&] {
                                // An idle keep-alive connection that times out is normal; a new
                                // one that never said anything is counted.
                                if (ec == beast::error::timeout && self->firstRequest_) {
                                  return self->closeForDeadline(ConnectionDeadline::kFirstRequest);
                                }
                                if (ec) return self->closeSocket();
                                self->firstRequest_ = false;
                                self->buffer_.commit(n);
                                self->readRequest();
                              });
                            });
  }

  void readRequest() {
    phase_ = Phase::kReading;
    firstRequest_ = false;
    parser_.emplace(options().requestLimits);
    lowest().expires_after(options().requestReadTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       self->guarded([&] { self->onRead(ec); });
                     });
  }

  void onRead(beast::error_code ec) {
    phase_ = Phase::kBusy;
    if (ec) {
      // A request that does not fit or is not HTTP gets its 431/413/400 and a close; a peer that
      // went away or ran out of time gets nothing.
      const RequestRefusal refusal = parser_->refusal(ec);
      parser_.reset();
      if (ec == beast::error::timeout) return closeForDeadline(ConnectionDeadline::kRequestRead);
      if (refusal == RequestRefusal::kNone) return closeSocket();
      if (context_.metrics != nullptr) context_.metrics->requestRefused(context_.name, refusal);
      return writeError(static_cast<http::status>(refusalStatus(refusal)));
    }

    head_ = parser_->head();
    wantsKeepAlive_ = parser_->keep_alive();
    HttpRequest request = parser_->release();
    parser_.reset();
    request.secure = kTls;
    request.remoteAddress = remoteAddress_;
    request.peer = peer_;
    dispatch(std::move(request));
  }

  // Health probes and the plain listener: here and now. Everything else: a handler thread, under
  // the in-flight limit and the request deadline.
  void dispatch(HttpRequest request) {
    if (probeOnly_) {
      // Admitted beyond the listener's cap, in the room kept for health probes: one probe, or a
      // 503.
      if (isHealthProbe(request)) return respond(callHandler(*context_.handler, request));
      if (context_.metrics != nullptr) context_.metrics->probeOnlyRefused(context_.name);
      return respond(listenerFullResponse());
    }
    HandlerPool* pool = context_.pool;
    if (pool == nullptr || isHealthProbe(request)) {
      return respond(callHandler(*context_.handler, request));
    }
    if (context_.inlineHandler != nullptr) {
      if (auto answered = callInlineHandler(*context_.inlineHandler, request)) {
        return respond(std::move(*answered));
      }
    }
    if (!pool->tryAdmit()) return respond(tooManyRequestsResponse());
    const uint64_t ticket = ++lastTicket_;
    pending_ = ticket;
    const auto timeout = options().requestTimeout;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // A parked request holds the connection only weakly (pooled_pending_request.h): the timer's
    // wait keeps it alive, also without a deadline.
    if (timeout.count() > 0 || context_.asyncHandler != nullptr) {
      deadline_.expires_at(timeout.count() > 0 ? deadline
                                               : std::chrono::steady_clock::time_point::max());
      deadline_.async_wait([self = this->shared_from_this(), ticket](beast::error_code ec) {
        if (!ec) self->guarded([&] { self->onDeadline(ticket); });
      });
    }
    pool->run([self = this->shared_from_this(), request = std::move(request), ticket, deadline,
               timeout]() mutable {
      // A request whose deadline passed while it waited for a thread has been answered already.
      if (timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) return;
      if (self->context_.asyncHandler != nullptr) {
        return startAsyncHandler(
            *self->context_.asyncHandler, std::move(request), *self->context_.pool,
            timeout.count() > 0 ? deadline : std::chrono::steady_clock::time_point::max(),
            [weak = self->weak_from_this(), ticket](HttpResponse response) {
              if (auto connection = weak.lock()) connection->deliver(ticket, std::move(response));
            });
      }
      self->deliver(ticket, callHandler(*self->context_.handler, request));
    });
  }

  // The handler's response, from any thread, onto the connection's strand.
  void deliver(uint64_t ticket, HttpResponse&& response) {
    net::post(stream_.get_executor(),
              [self = this->shared_from_this(), ticket, response = std::move(response)]() mutable {
                self->guarded([&] { self->onHandled(ticket, std::move(response)); });
              });
  }

  void onHandled(uint64_t ticket, HttpResponse&& response) {
    if (pending_ != ticket) return;  // answered 504 already
    pending_ = 0;
    deadline_.cancel();
    respond(std::move(response));
  }

  void onDeadline(uint64_t ticket) {
    if (pending_ != ticket) return;
    pending_ = 0;
    if (context_.metrics != nullptr) {
      context_.metrics->requestTimedOut(options().requestTimeout.count());
    }
    respond(requestTimeoutResponse(options().requestTimeout));
  }

  void respond(HttpResponse&& response) {
    keepAlive_ = context_.keepAlive && !probeOnly_ && wantsKeepAlive_ &&
                 !response.closeConnection && !closeRequested_ &&
                 !context_.registry->stopping.load();
    response_ = toBeastResponse(std::move(response), head_);
    write();
  }

  void writeError(http::status status) {
    keepAlive_ = false;
    lingering_ = true;
    response_ = protocolError(status);
    write();
  }

  void write() {
    response_.keep_alive(keepAlive_);
    lowest().expires_after(options().writeTimeout);
    http::async_write(stream_, response_,
                      [self = this->shared_from_this()](beast::error_code ec, size_t) {
                        self->guarded([&] { self->onWritten(ec); });
                      });
  }

  void onWritten(beast::error_code ec) {
    // Give back what the request and its response held: a connection keeps no more than an idle
    // read's worth of buffer between requests.
    response_ = {};
    if (buffer_.size() == 0 && buffer_.capacity() > kIdleReadBytes) buffer_.shrink_to_fit();
    if (ec == beast::error::timeout) return closeForDeadline(ConnectionDeadline::kWrite);
    if (ec) return closeSocket();
    if (lingering_) return drainThenClose();
    if (!keepAlive_) return closeGracefully();
    waitForRequest();
  }

  void closeGracefully() {
    phase_ = Phase::kClosing;
    if constexpr (kTls) {
      lowest().expires_after(std::chrono::seconds(1));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        self->guarded([&] { self->closeSocket(); });
      });
    } else {
      beast::error_code ec;
      lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
      closeSocket();
    }
  }

  // After rejecting a request the client may still be sending it; closing with unread bytes would
  // reset the connection and could destroy the error response before the client reads it. Read and
  // discard for a bounded time and amount first.
  void drainThenClose() {
    phase_ = Phase::kClosing;
    lowest().expires_after(std::chrono::seconds(2));
    drainMore();
  }

  void drainMore() {
    constexpr size_t kMaxDrain = 8 * 1024 * 1024;
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(std::min<size_t>(buffer_.max_size(), 16 * 1024)),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              self->guarded([&] {
                                self->drained_ += n;
                                if (ec || self->drained_ > kMaxDrain) return self->closeSocket();
                                self->drainMore();
                              });
                            });
  }

  void closeForDeadline(ConnectionDeadline deadline) {
    if (context_.metrics != nullptr) context_.metrics->connectionTimedOut(context_.name, deadline);
    closeSocket();
  }

  void closeSocket() {
    phase_ = Phase::kClosing;
    beast::error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest().close();
  }

  ListenerContext context_;
  ConnectionBudget::Ticket ticket_;
  const bool probeOnly_;
  // From accept: the TLS handshake and the first request's first byte must arrive before it.
  const std::chrono::steady_clock::time_point firstRequestDeadline_;
  bool firstRequest_ = true;
  std::shared_ptr<net::ssl::context> tlsContext_;  // outlives stream_ (declared before it)
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<RequestParser> parser_;
  http::response<http::string_body> response_;
  net::steady_timer deadline_;  // the request deadline of the request handed to the pool
  uint64_t lastTicket_ = 0;
  uint64_t pending_ = 0;  // ticket of the request awaiting its handler; 0: none
  bool head_ = false;
  bool wantsKeepAlive_ = false;
  std::string remoteAddress_;
  std::shared_ptr<const PeerCertificates> peer_;
  Phase phase_ = Phase::kHandshake;
  bool closeRequested_ = false;
  bool keepAlive_ = false;
  bool lingering_ = false;
  size_t drained_ = 0;
  uint64_t id_ = 0;
};

}  // namespace gpuscale::apiserver::detail
