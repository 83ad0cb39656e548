// Private: the TLS stream of the servers' connections: OpenSSL reading and writing the TCP socket
// itself (a socket BIO on the non-blocking descriptor), driven by Asio readiness waits, with the
// deadlines of beast::tcp_stream.
//
// Why not Asio's ssl::stream: it keeps two 17 KiB record buffers (zeroed, so resident) and a
// 2 x 17 KiB BIO pair per connection for the connection's whole life, busy or idle; with a
// thousand idle keep-alive connections that was most of the server's memory (89 MiB). Here an
// idle connection holds OpenSSL's SSL object and no record buffer (SSL_MODE_RELEASE_BUFFERS).
//
// It is an AsyncReadStream and AsyncWriteStream for Beast's http::async_read/async_write, with the
// server side of the handshake and shutdown, and deadlines as beast::tcp_stream has them
// (expires_after, expires_at, expires_never): an operation pending when the deadline passes, or
// started after it passed, fails with beast::error::timeout. cancel() ends a pending operation
// with operation_aborted.
//
// Readiness: Asio registers the descriptor edge-triggered and its waits are not speculative, so an
// edge that arrives between a read that would block and the wait queued after it would be lost
// (another I/O thread consumes it with no wait queued). Each wait therefore looks once more with
// poll() after it is queued and, if the socket is ready already, cancels itself to try again.
//
// Thread safety: as an Asio I/O object: from the socket's strand, one operation at a time (the
// servers never read and write a connection at once).
#pragma once

#include <openssl/ssl.h>

#include <array>
#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/error.hpp>
#include <chrono>
#include <cstddef>
#include <memory>

namespace gpuscale::apiserver::detail {

class TlsSocketStream {
 public:
  using executor_type = boost::asio::ip::tcp::socket::executor_type;
  using Clock = std::chrono::steady_clock;

  // Takes the accepted socket; the session uses `context` (its certificates, verification and
  // callbacks). Throws std::bad_alloc when OpenSSL cannot create the session.
  TlsSocketStream(boost::asio::ip::tcp::socket&& socket, boost::asio::ssl::context& context);
  TlsSocketStream(TlsSocketStream&&) = default;
  TlsSocketStream& operator=(TlsSocketStream&&) = default;

  executor_type get_executor() { return core_->socket.get_executor(); }
  SSL* native_handle() { return core_->ssl.get(); }
  boost::asio::ip::tcp::socket& socket() { return core_->socket; }

  void expires_at(Clock::time_point deadline);
  void expires_after(Clock::duration timeout) { expires_at(Clock::now() + timeout); }
  void expires_never();
  void cancel();
  void close();

  template <typename MutableBuffers, typename Handler>
  auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    Bytes bytes;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::mutable_buffer piece = *it;
      if (piece.size() == 0) continue;
      bytes.into = piece;
      break;
    }
    return boost::asio::async_compose<Handler, void(boost::beast::error_code, std::size_t)>(
        Op<true>{core_, Kind::kRead, bytes}, handler, core_->socket);
  }
  template <typename ConstBuffers, typename Handler>
  auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    Bytes bytes;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && bytes.count < bytes.pieces.size();
         ++it) {
      const boost::asio::const_buffer piece = *it;  // Beast's iterators have no operator->
      if (piece.size() > 0) bytes.pieces[bytes.count++] = piece;
    }
    return boost::asio::async_compose<Handler, void(boost::beast::error_code, std::size_t)>(
        Op<true>{core_, Kind::kWrite, bytes}, handler, core_->socket);
  }
  template <typename Handler>
  auto async_handshake(boost::asio::ssl::stream_base::handshake_type, Handler&& handler) {
    return boost::asio::async_compose<Handler, void(boost::beast::error_code)>(
        Op<false>{core_, Kind::kHandshake, {}}, handler, core_->socket);
  }
  // Sends close_notify (does not wait for the peer's).
  template <typename Handler>
  auto async_shutdown(Handler&& handler) {
    return boost::asio::async_compose<Handler, void(boost::beast::error_code)>(
        Op<false>{core_, Kind::kShutdown, {}}, handler, core_->socket);
  }

 private:
  struct SslFree {
    void operator()(SSL* ssl) const { SSL_free(ssl); }
  };
  struct Core {
    explicit Core(boost::asio::ip::tcp::socket&& s);
    boost::asio::ip::tcp::socket socket;
    boost::asio::steady_timer timer;
    std::unique_ptr<SSL, SslFree> ssl;  // freed before the socket closes (declared after it)
    bool timedOut = false;
    bool retryAfterCancel = false;  // the pending wait was cancelled by its own readiness check
    unsigned long timerGeneration = 0;
  };

  enum class Kind { kRead, kWrite, kHandshake, kShutdown };
  // What one operation reads into (the first non-empty buffer) or writes (the first pieces of the
  // sequence: one TLS record's worth is gathered per step, see step()).
  struct Bytes {
    boost::asio::mutable_buffer into;
    std::array<boost::asio::const_buffer, 8> pieces;
    std::size_t count = 0;
  };

  // One step of an operation: the OpenSSL call, then done or a wait for readiness. kSized: the
  // completion reports a byte count (reads and writes).
  template <bool kSized>
  struct Op {
    std::shared_ptr<Core> core;
    Kind kind;
    Bytes bytes;
    bool waited = false;  // completions after a wait are already outside the initiating call

    template <typename Self>
    void operator()(Self& self, boost::beast::error_code ec = {}) {
      if (ec == boost::asio::error::operation_aborted && core->retryAfterCancel &&
          !core->timedOut) {
        core->retryAfterCancel = false;
        ec = {};
      }
      if (core->timedOut) return finish(self, boost::beast::error::timeout, 0);
      if (ec) return finish(self, ec, 0);
      std::size_t done = 0;
      const int want = step(*core, kind, bytes, done, ec);
      if (want == 0) return finish(self, ec, done);
      const auto wait = want == SSL_ERROR_WANT_READ ? boost::asio::ip::tcp::socket::wait_read
                                                    : boost::asio::ip::tcp::socket::wait_write;
      std::shared_ptr<Core> keep = core;  // `self` (and this op) moves into the wait
      waited = true;
      keep->retryAfterCancel = false;
      keep->socket.async_wait(wait, std::move(self));
      checkReady(*keep, wait);
    }

    template <typename Self>
    void finish(Self& self, boost::beast::error_code ec, std::size_t n) {
      if (waited) return complete(self, ec, n);
      // Completing inside the initiating call would run the caller's handler on its stack.
      auto executor = core->socket.get_executor();
      boost::asio::post(executor,
                        [self = std::move(self), ec, n]() mutable { complete(self, ec, n); });
    }

    template <typename Self>
    static void complete(Self& self, boost::beast::error_code ec, std::size_t n) {
      if constexpr (kSized) {
        self.complete(ec, n);
      } else {
        self.complete(ec);
      }
    }
  };

  // The OpenSSL call of one step; 0 when the operation is over (`ec` and `done` tell how), else
  // SSL_ERROR_WANT_READ or SSL_ERROR_WANT_WRITE.
  static int step(Core& core, Kind kind, const Bytes& bytes, std::size_t& done,
                  boost::beast::error_code& ec);
  // Cancels the wait just queued when the socket is ready already (see the file comment).
  static void checkReady(Core& core, boost::asio::ip::tcp::socket::wait_type wait);

  std::shared_ptr<Core> core_;
};

}  // namespace gpuscale::apiserver::detail
