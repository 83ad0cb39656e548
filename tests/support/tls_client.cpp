#include "support/tls_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace gpuscale::testing {

struct TlsClient::Impl {
  int fd = -1;
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  std::string pending;  // bytes read past the last reply

  ~Impl() {
    if (ssl) SSL_free(ssl);
    if (ctx) SSL_CTX_free(ctx);
    if (fd >= 0) ::close(fd);
  }

  // Waits for readable data; false on timeout.
  bool waitReadable(std::chrono::milliseconds timeout) const {
    if (ssl != nullptr && SSL_pending(ssl) > 0) return true;
    pollfd pfd{fd, POLLIN, 0};
    return ::poll(&pfd, 1, static_cast<int>(timeout.count())) > 0;
  }

  // Reads more bytes into `pending`; 0 on EOF/error, -1 on timeout.
  int readMore(std::chrono::milliseconds timeout) {
    if (!waitReadable(timeout)) return -1;
    char buffer[16384];
    if (ssl == nullptr) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n <= 0) return 0;
      pending.append(buffer, static_cast<size_t>(n));
      return static_cast<int>(n);
    }
    const int n = SSL_read(ssl, buffer, sizeof buffer);
    if (n <= 0) {
      const int error = SSL_get_error(ssl, n);
      if (error == SSL_ERROR_WANT_READ) return readMore(timeout);
      return 0;
    }
    pending.append(buffer, static_cast<size_t>(n));
    return n;
  }
};

namespace {

void loadClientCertificate(SSL_CTX* ctx, const ClientCertificate& certificate) {
  BIO* certBio = BIO_new_mem_buf(certificate.certificatePem.data(),
                                 static_cast<int>(certificate.certificatePem.size()));
  X509* cert = PEM_read_bio_X509(certBio, nullptr, nullptr, nullptr);
  BIO* keyBio = BIO_new_mem_buf(certificate.privateKeyPem.data(),
                                static_cast<int>(certificate.privateKeyPem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(keyBio, nullptr, nullptr, nullptr);
  const bool ok = cert && key && SSL_CTX_use_certificate(ctx, cert) == 1 &&
                  SSL_CTX_use_PrivateKey(ctx, key) == 1;
  X509_free(cert);
  EVP_PKEY_free(key);
  BIO_free(certBio);
  BIO_free(keyBio);
  if (!ok) throw std::runtime_error("bad client certificate");
}

std::string commonName(const X509_NAME* name) {
  char text[256] = {};
  if (name == nullptr || X509_NAME_get_text_by_NID(const_cast<X509_NAME*>(name), NID_commonName,
                                                   text, sizeof text) < 0) {
    return "";
  }
  return text;
}

}  // namespace

std::string TlsClient::serverCommonName() const {
  if (impl_->ssl == nullptr) return "";
  X509* cert = SSL_get1_peer_certificate(impl_->ssl);
  const std::string name = cert ? commonName(X509_get_subject_name(cert)) : "";
  X509_free(cert);
  return name;
}

std::vector<std::string> TlsClient::acceptableClientCaNames() const {
  std::vector<std::string> names;
  if (impl_->ssl == nullptr) return names;
  const STACK_OF(X509_NAME)* list = SSL_get_client_CA_list(impl_->ssl);
  for (int i = 0; list != nullptr && i < sk_X509_NAME_num(list); ++i) {
    names.push_back(commonName(sk_X509_NAME_value(list, i)));
  }
  return names;
}

TlsClient::TlsClient(uint16_t port, const std::optional<ClientCertificate>& certificate)
    : TlsClient(port, ClientOptions{true, certificate, ""}) {}

TlsClient::TlsClient(uint16_t port, const ClientOptions& options)
    : impl_(std::make_unique<Impl>()) {
  // A server may close the connection while the handshake or a request is being written (that is
  // what some tests check): a write must then fail, not kill the test program with SIGPIPE.
  static const bool sigpipeIgnored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)sigpipeIgnored;
  impl_->fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (!options.sourceAddress.empty()) {
    sockaddr_in source{};
    source.sin_family = AF_INET;
    if (::inet_pton(AF_INET, options.sourceAddress.c_str(), &source.sin_addr) != 1 ||
        ::bind(impl_->fd, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) {
      throw std::runtime_error("cannot bind to " + options.sourceAddress);
    }
  }
  if (::connect(impl_->fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    throw std::runtime_error("connect failed");
  }
  if (!options.tls) return;
  impl_->ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(impl_->ctx, SSL_VERIFY_NONE, nullptr);
  if (options.certificate) loadClientCertificate(impl_->ctx, *options.certificate);
  impl_->ssl = SSL_new(impl_->ctx);
  SSL_set_fd(impl_->ssl, impl_->fd);
  if (SSL_connect(impl_->ssl) != 1) throw std::runtime_error("TLS handshake failed");
}

TlsClient::~TlsClient() = default;

bool TlsClient::send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    if (impl_->ssl == nullptr) {
      const ssize_t n = ::send(impl_->fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
      continue;
    }
    const int n = SSL_write(impl_->ssl, bytes.data() + sent, static_cast<int>(bytes.size() - sent));
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void TlsClient::shutdownSending() { ::shutdown(impl_->fd, SHUT_WR); }

std::optional<HttpReply> TlsClient::get(const std::string& target,
                                        const std::string& extraHeaders) {
  if (!send("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extraHeaders + "\r\n")) {
    return std::nullopt;
  }
  return readReply();
}

std::optional<HttpReply> TlsClient::readReply(std::chrono::milliseconds timeout) {
  std::string& data = impl_->pending;
  size_t headerEnd;
  while ((headerEnd = data.find("\r\n\r\n")) == std::string::npos) {
    if (impl_->readMore(timeout) <= 0) return std::nullopt;
  }
  HttpReply reply;
  reply.headers = data.substr(0, headerEnd);
  if (reply.headers.size() < 12) return std::nullopt;
  reply.status = std::stoi(reply.headers.substr(9, 3));
  size_t length = 0;
  std::string lower = reply.headers;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (const size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
    length = std::stoul(lower.substr(at + 17));
  }
  reply.closeRequested = lower.find("\r\nconnection: close") != std::string::npos;
  while (data.size() < headerEnd + 4 + length) {
    if (impl_->readMore(timeout) <= 0) return std::nullopt;
  }
  reply.body = data.substr(headerEnd + 4, length);
  data.erase(0, headerEnd + 4 + length);
  return reply;
}

bool TlsClient::closedByPeer(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const int n = impl_->readMore(left);
    if (n == 0) return true;
    if (n < 0) return false;
  }
  return false;
}

}  // namespace gpuscale::testing
