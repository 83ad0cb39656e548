#include "tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstring>
#include <exception>

namespace gpuscale::apiserver::detail {
namespace {

using core::Result;
using core::Status;

constexpr unsigned char kSessionContext[] = "gpuscale-apiserver";

// The TLS 1.2 suites offered when the operator names none: ECDHE key exchange (forward secrecy)
// with an AEAD cipher, as Kubernetes components offer by default. OpenSSL's own default would add
// RSA key exchange (no forward secrecy) and CBC suites whenever the certificate is RSA.
constexpr char kForwardSecretAeadSuites[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// Every TLS 1.2 suite the context would negotiate must be ECDHE + AEAD (TLS 1.3 suites all are).
// The flag parser never lets another one through; this keeps the promise if a caller builds a
// TlsConfig by hand.
core::Status checkForwardSecretAead(SSL_CTX* ctx) {
  const STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(ctx);
  for (int i = 0; ciphers != nullptr && i < sk_SSL_CIPHER_num(ciphers); ++i) {
    const SSL_CIPHER* cipher = sk_SSL_CIPHER_value(ciphers, i);
    if (SSL_CIPHER_get_kx_nid(cipher) == NID_kx_any) continue;  // a TLS 1.3 suite
    if (SSL_CIPHER_get_kx_nid(cipher) != NID_kx_ecdhe || SSL_CIPHER_is_aead(cipher) != 1) {
      return Status::invalid(std::string("TLS 1.2 cipher suite ") + SSL_CIPHER_get_name(cipher) +
                             " lacks forward secrecy or an AEAD cipher");
    }
  }
  return {};
}

int selectHttp11(SSL* /*ssl*/, const unsigned char** out, unsigned char* outLength,
                 const unsigned char* in, unsigned int inLength, void* /*arg*/) {
  // `in` is a list of length-prefixed protocol names; take http/1.1 when offered.
  for (unsigned int i = 0; i < inLength;) {
    const unsigned int length = in[i];
    if (i + 1 + length > inLength) break;
    if (length == 8 && std::memcmp(in + i + 1, "http/1.1", 8) == 0) {
      *out = in + i + 1;
      *outLength = static_cast<unsigned char>(length);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + length;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

// Adds every certificate of a PEM bundle to the verification store and to the CA names the server
// sends in its CertificateRequest. Returns how many were added.
int addClientCaBundle(SSL_CTX* ctx, const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return 0;
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), cert);
    SSL_CTX_add_client_CA(ctx, cert);
    X509_free(cert);
    ++added;
  }
  ERR_clear_error();  // the loop ends on a "no start line" error
  BIO_free(bio);
  return added;
}

std::string derBytes(X509* cert) {
  unsigned char* der = nullptr;
  const int length = i2d_X509(cert, &der);
  if (length <= 0) return {};
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(length));
  OPENSSL_free(der);
  return out;
}

std::vector<std::string> subjectEntries(X509* cert, int nid) {
  std::vector<std::string> out;
  X509_NAME* name = X509_get_subject_name(cert);
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, nid, i)) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    unsigned char* utf8 = nullptr;
    const int length = ASN1_STRING_to_UTF8(&utf8, data);
    if (length < 0) continue;
    out.emplace_back(reinterpret_cast<char*>(utf8), static_cast<size_t>(length));
    OPENSSL_free(utf8);
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<boost::asio::ssl::context>> makeServerTlsContext(const TlsConfig& tls) {
  namespace ssl = boost::asio::ssl;
  std::shared_ptr<ssl::context> context;
  try {
    context = std::make_shared<ssl::context>(ssl::context::tls_server);
    context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                         ssl::context::no_sslv3 | ssl::context::single_dh_use |
                         SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    context->use_certificate_chain(boost::asio::buffer(tls.certificateChainPem));
    context->use_private_key(boost::asio::buffer(tls.privateKeyPem), ssl::context::pem);
  } catch (const std::exception& error) {
    return Status::invalid(std::string("serving certificate or key: ") + error.what());
  }
  SSL_CTX* ctx = context->native_handle();
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Status::invalid("serving certificate and private key do not match");
  }
  const int minVersion = tls.minVersion == TlsMinVersion::kTls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
  SSL_CTX_set_min_proto_version(ctx, minVersion);
  const std::string ciphers = tls.cipherList.empty() ? kForwardSecretAeadSuites : tls.cipherList;
  if (SSL_CTX_set_cipher_list(ctx, ciphers.c_str()) != 1) {
    ERR_clear_error();
    return Status::invalid("no usable TLS 1.2 cipher suite in --tls-cipher-suites");
  }
  if (Status suites = checkForwardSecretAead(ctx); !suites.ok()) return suites;
  SSL_CTX_set_alpn_select_cb(ctx, selectHttp11, nullptr);
  // Required for session resumption once client certificates are requested.
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  for (const auto& pem : tls.clientCaPems) {
    if (addClientCaBundle(ctx, pem) == 0) {
      return Status::invalid("client CA bundle contains no PEM certificate");
    }
  }
  // Request a certificate, never require it, and let the handshake succeed whatever it is:
  // authentication decides from PeerCertificates::verified (as Go's tls.RequestClientCert +
  // apiserver x509 authenticator).
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
  return context;
}

std::shared_ptr<const PeerCertificates> peerCertificates(SSL* ssl) {
  X509* leaf = SSL_get0_peer_certificate(ssl);
  if (leaf == nullptr) return nullptr;
  auto peer = std::make_shared<PeerCertificates>();
  peer->chainDer.push_back(derBytes(leaf));
  if (STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl)) {
    for (int i = 0; i < sk_X509_num(chain); ++i) {
      X509* cert = sk_X509_value(chain, i);
      if (X509_cmp(cert, leaf) != 0) peer->chainDer.push_back(derBytes(cert));
    }
  }
  const long result = SSL_get_verify_result(ssl);
  peer->verified = result == X509_V_OK;
  if (!peer->verified) peer->verifyError = X509_verify_cert_error_string(result);
  auto commonNames = subjectEntries(leaf, NID_commonName);
  if (!commonNames.empty()) peer->commonName = commonNames.front();
  peer->organizations = subjectEntries(leaf, NID_organizationName);
  return peer;
}

}  // namespace gpuscale::apiserver::detail
