// Private: the server's OpenSSL context and peer-certificate extraction.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "gpuscale/apiserver/certificates.h"
#include "gpuscale/apiserver/http_message.h"
#include "gpuscale/core/result.h"

namespace gpuscale::apiserver::detail {

// Serving certificate + key (validated against each other), minimum TLS version, ALPN http/1.1,
// client certificates requested but not required, verified against `clientCaPems` without failing
// the handshake. TLS 1.2 offers only forward-secret AEAD suites (ECDHE-ECDSA/ECDHE-RSA with
// AES-GCM or CHACHA20-POLY1305; `tls.cipherList` narrows them, and a list naming any other suite
// is an error), whatever the certificate's key type; TLS 1.3 offers OpenSSL's suites (all AEAD,
// all forward-secret). No renegotiation, no compression.
core::Result<std::shared_ptr<boost::asio::ssl::context>> makeServerTlsContext(const TlsConfig& tls);

// The peer's certificates after a completed handshake; null when it sent none.
std::shared_ptr<const PeerCertificates> peerCertificates(SSL* ssl);

}  // namespace gpuscale::apiserver::detail
