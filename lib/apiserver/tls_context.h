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
// the handshake.
core::Result<std::shared_ptr<boost::asio::ssl::context>> makeServerTlsContext(const TlsConfig& tls);

// The peer's certificates after a completed handshake; null when it sent none.
std::shared_ptr<const PeerCertificates> peerCertificates(SSL* ssl);

}  // namespace gpuscale::apiserver::detail
