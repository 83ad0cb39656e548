// A raw TLS client for server tests: connect to 127.0.0.1, send arbitrary bytes (valid requests,
// garbage, half requests), read what comes back, and see whether the server closed the connection.
// The same without TLS for plain listeners (ClientOptions::tls = false), and from another loopback
// source address (127.0.0.2, ...) for per-source limits.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuscale::testing {

struct ClientCertificate {
  std::string certificatePem;
  std::string privateKeyPem;
};

struct ClientOptions {
  bool tls = true;
  std::optional<ClientCertificate> certificate;
  std::string sourceAddress;  // "" = any; else a local address to bind, e.g. "127.0.0.9"
};

struct HttpReply {
  int status = 0;
  std::string headers;  // raw header block
  std::string body;
  bool closeRequested = false;  // "Connection: close"
};

class TlsClient {
 public:
  // Connects and completes the TLS handshake (server certificate not verified). Throws
  // std::runtime_error when the connection or handshake fails.
  explicit TlsClient(uint16_t port,
                     const std::optional<ClientCertificate>& certificate = std::nullopt);
  TlsClient(uint16_t port, const ClientOptions& options);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  // Writes raw bytes; false when the connection is broken.
  bool send(const std::string& bytes);
  // Ends the sending direction (TCP half-close): the server reads end of stream.
  void shutdownSending();
  // Sends "GET target HTTP/1.1" with Host and the extra header lines and reads one response.
  std::optional<HttpReply> get(const std::string& target, const std::string& extraHeaders = "");
  // Reads one HTTP response (status line, headers, Content-Length body) within `timeout`.
  std::optional<HttpReply> readReply(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // True when the server closes the connection (EOF or reset) within `timeout`.
  bool closedByPeer(std::chrono::milliseconds timeout);
  // The CN of the certificate the server presented.
  std::string serverCommonName() const;
  // The CNs of the CAs the server named in its CertificateRequest (empty if it asked for none).
  std::vector<std::string> acceptableClientCaNames() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscale::testing
