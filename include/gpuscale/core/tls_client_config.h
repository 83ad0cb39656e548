// TlsClientConfig: how gpuscale's outbound HTTPS clients (Prometheus, the Kubernetes API, the
// external-metrics fallback) verify the server and present a client certificate. One value and one
// place that turns it into an OpenSSL context, so every client offers the same protocol versions
// and treats its PEM material the same way.
//
// Thread safety: a plain value; configure() and check() only read it.
#pragma once

#include <string>

#include "gpuscale/core/result.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace gpuscale::core {

struct TlsClientConfig {
  std::string caPem;  // trusted CAs (PEM); empty: the system's
  // A client certificate (chain allowed) and its key, both PEM; empty: none.
  std::string clientCertPem;
  std::string clientKeyPem;
  bool insecureSkipTlsVerify = false;  // do not verify the server's certificate (tests only)

  // The PEM files (each "" = none) read into a config; an unreadable file is an error naming it.
  static Result<TlsClientConfig> fromFiles(const std::string& caFile, const std::string& certFile,
                                           const std::string& keyFile);

  // Sets up `context` for a client: TLS 1.2 or later, peer verification unless
  // insecureSkipTlsVerify, the CAs (or the system's default paths), the client certificate.
  // Status::invalid when the PEM material does not load (the context is then partly set).
  Status configure(boost::asio::ssl::context& context) const;
  // configure() on a scratch context: whether the material loads.
  Status check() const;
};

}  // namespace gpuscale::core
