#include "tls_socket_stream.h"

#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

namespace gpuscale::apiserver::detail {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// One TLS record's plaintext: what a write step sends at most.
constexpr std::size_t kRecordBytes = 16 * 1024;

boost::beast::error_code sslFailure(int code) {
  if (code == SSL_ERROR_ZERO_RETURN) return net::error::eof;  // the peer's close_notify
  const unsigned long queued = ERR_get_error();
  ERR_clear_error();
  if (queued != 0) {
    return {static_cast<int>(queued), net::error::get_ssl_category()};
  }
  if (code == SSL_ERROR_SYSCALL && errno != 0) {
    return {errno, boost::system::system_category()};
  }
  return net::error::eof;  // the peer went away without close_notify
}

// OpenSSL's own socket BIO writes with write(2): a peer that reset the connection would raise
// SIGPIPE and end the process. This one sends with MSG_NOSIGNAL (as Asio does).
int descriptorOf(BIO* bio) {
  return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio)));
}

bool transient() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

int bioWrite(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t sent = ::send(descriptorOf(bio), data, static_cast<size_t>(size), MSG_NOSIGNAL);
  if (sent < 0 && transient()) BIO_set_retry_write(bio);
  return static_cast<int>(sent);
}

int bioRead(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t received = ::recv(descriptorOf(bio), data, static_cast<size_t>(size), 0);
  if (received < 0 && transient()) BIO_set_retry_read(bio);
  return static_cast<int>(received);
}

long bioControl(BIO*, int command, long, void*) { return command == BIO_CTRL_FLUSH ? 1 : 0; }

BIO_METHOD* socketMethod() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* created = BIO_meth_new(
        BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "gpuscale socket");
    if (created != nullptr) {
      BIO_meth_set_write(created, bioWrite);
      BIO_meth_set_read(created, bioRead);
      BIO_meth_set_ctrl(created, bioControl);
    }
    return created;
  }();
  return method;
}

}  // namespace

TlsSocketStream::Core::Core(tcp::socket&& s) : socket(std::move(s)), timer(socket.get_executor()) {}

TlsSocketStream::TlsSocketStream(tcp::socket&& socket, net::ssl::context& context)
    : core_(std::make_shared<Core>(std::move(socket))) {
  core_->ssl.reset(SSL_new(context.native_handle()));
  BIO* bio = socketMethod() != nullptr ? BIO_new(socketMethod()) : nullptr;
  if (!core_->ssl || bio == nullptr) {
    BIO_free(bio);
    ERR_clear_error();
    throw std::bad_alloc();
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(core_->socket.native_handle())));
  BIO_set_init(bio, 1);
  SSL_set_bio(core_->ssl.get(), bio, bio);  // the session owns it
  SSL_set_mode(core_->ssl.get(), SSL_MODE_ENABLE_PARTIAL_WRITE |
                                     SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                     SSL_MODE_RELEASE_BUFFERS);
  SSL_set_accept_state(core_->ssl.get());
  boost::system::error_code ec;
  core_->socket.non_blocking(true, ec);
}

void TlsSocketStream::expires_at(Clock::time_point deadline) {
  Core& core = *core_;
  core.timedOut = false;
  const unsigned long generation = ++core.timerGeneration;
  core.timer.expires_at(deadline);
  core.timer.async_wait(
      [weak = std::weak_ptr<Core>(core_), generation](const boost::system::error_code& ec) {
        const auto alive = weak.lock();
        if (ec || !alive || alive->timerGeneration != generation) return;
        alive->timedOut = true;
        boost::system::error_code ignored;
        alive->socket.cancel(ignored);
      });
}

void TlsSocketStream::expires_never() {
  ++core_->timerGeneration;
  core_->timedOut = false;
  core_->timer.cancel();
}

void TlsSocketStream::cancel() {
  core_->retryAfterCancel = false;
  boost::system::error_code ignored;
  core_->socket.cancel(ignored);
}

void TlsSocketStream::close() {
  ++core_->timerGeneration;
  core_->timer.cancel();
  boost::system::error_code ignored;
  core_->socket.close(ignored);
}

int TlsSocketStream::step(Core& core, Kind kind, const Bytes& bytes, std::size_t& done,
                          boost::beast::error_code& ec) {
  SSL* ssl = core.ssl.get();
  ERR_clear_error();
  errno = 0;
  int result = 0;
  switch (kind) {
    case Kind::kRead:
      if (bytes.into.size() == 0) return 0;
      result = SSL_read_ex(ssl, bytes.into.data(), bytes.into.size(), &done);
      break;
    case Kind::kWrite: {
      if (bytes.count == 0) return 0;
      if (bytes.count == 1) {
        result = SSL_write_ex(ssl, bytes.pieces[0].data(), bytes.pieces[0].size(), &done);
        break;
      }
      // Several pieces (a response's header and body): one record rather than one per piece.
      // After a wait the same bytes are gathered again, as OpenSSL wants on a retry.
      thread_local char scratch[kRecordBytes];
      std::size_t size = 0;
      for (std::size_t i = 0; i < bytes.count && size < kRecordBytes; ++i) {
        const std::size_t n = std::min(bytes.pieces[i].size(), kRecordBytes - size);
        std::memcpy(scratch + size, bytes.pieces[i].data(), n);
        size += n;
      }
      result = SSL_write_ex(ssl, scratch, size, &done);
      break;
    }
    case Kind::kHandshake:
      result = SSL_do_handshake(ssl);
      break;
    case Kind::kShutdown:
      result = SSL_shutdown(ssl);
      if (result == 0) result = 1;  // close_notify sent; the peer's is not waited for
      break;
  }
  if (result == 1) return 0;
  const int code = SSL_get_error(ssl, result);
  if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) return code;
  ec = sslFailure(code);
  done = 0;
  return 0;
}

void TlsSocketStream::checkReady(Core& core, tcp::socket::wait_type wait) {
  pollfd ready{core.socket.native_handle(),
               static_cast<short>(wait == tcp::socket::wait_read ? POLLIN : POLLOUT), 0};
  if (::poll(&ready, 1, 0) <= 0) return;
  core.retryAfterCancel = true;
  boost::system::error_code ignored;
  core.socket.cancel(ignored);
}

}  // namespace gpuscale::apiserver::detail
