// The serving TLS context's protocol and suite policy, checked by handshakes in memory (a BIO pair,
// no sockets): TLS 1.2 only with forward-secret AEAD suites, whatever the certificate's key type,
// and TLS 1.3.
#include "tls_context.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace gpuscale::apiserver::detail {
namespace tls_context_test {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using SslPtr = std::unique_ptr<SSL, Deleter<SSL, SSL_free>>;
using SslCtxPtr = std::unique_ptr<SSL_CTX, Deleter<SSL_CTX, SSL_CTX_free>>;

std::string drain(BIO* bio) {
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(length));
}

// A self-signed RSA-2048 certificate and its key, PEM: the kind of certificate with which
// OpenSSL's default suites include RSA key exchange.
TlsConfig rsaServingConfig() {
  KeyPtr key(EVP_RSA_gen(2048));
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("rsa-server"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  X509_sign(cert.get(), key.get(), EVP_sha256());
  BioPtr certPem(BIO_new(BIO_s_mem()));
  BioPtr keyPem(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(certPem.get(), cert.get());
  PEM_write_bio_PrivateKey(keyPem.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  TlsConfig config;
  config.certificateChainPem = drain(certPem.get());
  config.privateKeyPem = drain(keyPem.get());
  return config;
}

TlsConfig ecdsaServingConfig() {
  auto generated = generateSelfSignedCertificate("localhost", {"localhost"}, {"127.0.0.1"});
  EXPECT_TRUE(generated.ok()) << generated.status().toString();
  TlsConfig config;
  config.certificateChainPem = generated->certificateChainPem;
  config.privateKeyPem = generated->privateKeyPem;
  return config;
}

struct ClientOffer {
  int maxVersion;           // TLS1_2_VERSION or TLS1_3_VERSION
  std::string tls12Suites;  // OpenSSL cipher list for TLS <= 1.2
};

// Runs a client/server handshake over a BIO pair. Returns the negotiated TLS 1.2 suite name or
// "TLSv1.3", or "" when the handshake failed.
std::string handshake(const TlsConfig& config, const ClientOffer& offer) {
  auto server = makeServerTlsContext(config);
  EXPECT_TRUE(server.ok()) << server.status().toString();
  if (!server.ok()) return "";
  SslCtxPtr clientCtx(SSL_CTX_new(TLS_client_method()));
  SSL_CTX_set_max_proto_version(clientCtx.get(), offer.maxVersion);
  if (!offer.tls12Suites.empty()) {
    EXPECT_EQ(SSL_CTX_set_cipher_list(clientCtx.get(), offer.tls12Suites.c_str()), 1);
  }
  SslPtr client(SSL_new(clientCtx.get()));
  SslPtr serverSsl(SSL_new((*server)->native_handle()));
  BIO* clientBio = nullptr;
  BIO* serverBio = nullptr;
  BIO_new_bio_pair(&clientBio, 0, &serverBio, 0);
  SSL_set_bio(client.get(), clientBio, clientBio);
  SSL_set_bio(serverSsl.get(), serverBio, serverBio);
  SSL_set_connect_state(client.get());
  SSL_set_accept_state(serverSsl.get());

  bool clientDone = false;
  bool serverDone = false;
  for (int round = 0; round < 20 && !(clientDone && serverDone); ++round) {
    const std::pair<SSL*, bool*> sides[] = {{client.get(), &clientDone},
                                            {serverSsl.get(), &serverDone}};
    for (const auto& [ssl, done] : sides) {
      if (*done) continue;
      const int result = SSL_do_handshake(ssl);
      if (result == 1) {
        *done = true;
        continue;
      }
      const int error = SSL_get_error(ssl, result);
      if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) {
        ERR_clear_error();
        return "";
      }
    }
  }
  if (!clientDone || !serverDone) return "";
  if (SSL_version(client.get()) == TLS1_3_VERSION) return "TLSv1.3";
  return SSL_CIPHER_get_name(SSL_get_current_cipher(client.get()));
}

TEST(ServerTlsContext, RsaCertificateRefusesRsaKeyExchange) {
  const TlsConfig config = rsaServingConfig();
  EXPECT_EQ(handshake(config, {TLS1_2_VERSION, "AES128-GCM-SHA256"}), "");
  EXPECT_EQ(handshake(config, {TLS1_2_VERSION, "AES256-SHA"}), "");
  EXPECT_EQ(handshake(config, {TLS1_2_VERSION, "ECDHE-RSA-AES128-GCM-SHA256"}),
            "ECDHE-RSA-AES128-GCM-SHA256");
  EXPECT_EQ(handshake(config, {TLS1_2_VERSION, "ECDHE-RSA-CHACHA20-POLY1305"}),
            "ECDHE-RSA-CHACHA20-POLY1305");
  EXPECT_EQ(handshake(config, {TLS1_3_VERSION, ""}), "TLSv1.3");
}

TEST(ServerTlsContext, CbcSuitesAreNotOfferedEvenWithForwardSecrecy) {
  const TlsConfig config = rsaServingConfig();
  EXPECT_EQ(handshake(config, {TLS1_2_VERSION, "ECDHE-RSA-AES128-SHA"}), "");
  EXPECT_EQ(handshake(config, {TLS1_2_VERSION, "ECDHE-RSA-AES256-SHA384"}), "");
}

TEST(ServerTlsContext, EcdsaCertificateNegotiatesEcdheAead) {
  const TlsConfig config = ecdsaServingConfig();
  EXPECT_EQ(handshake(config, {TLS1_2_VERSION, "ECDHE-ECDSA-AES256-GCM-SHA384"}),
            "ECDHE-ECDSA-AES256-GCM-SHA384");
  EXPECT_EQ(handshake(config, {TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA"}), "");
  EXPECT_EQ(handshake(config, {TLS1_3_VERSION, ""}), "TLSv1.3");
}

TEST(ServerTlsContext, OperatorListNarrowsTheSuites) {
  TlsConfig config = rsaServingConfig();
  config.cipherList = "ECDHE-RSA-AES256-GCM-SHA384";
  EXPECT_EQ(handshake(config, {TLS1_2_VERSION, "ECDHE-RSA-AES128-GCM-SHA256"}), "");
  EXPECT_EQ(handshake(config, {TLS1_2_VERSION, "ECDHE-RSA-AES256-GCM-SHA384"}),
            "ECDHE-RSA-AES256-GCM-SHA384");
}

TEST(ServerTlsContext, ListWithoutForwardSecrecyIsRejected) {
  TlsConfig config = rsaServingConfig();
  config.cipherList = "ECDHE-RSA-AES128-GCM-SHA256:AES128-GCM-SHA256";
  auto context = makeServerTlsContext(config);
  ASSERT_FALSE(context.ok());
  EXPECT_NE(context.status().message().find("AES128-GCM-SHA256"), std::string::npos)
      << context.status().message();
}

TEST(ServerTlsContext, EveryTls12SuiteOfferedIsEcdheAead) {
  auto context = makeServerTlsContext(rsaServingConfig());
  ASSERT_TRUE(context.ok());
  const STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers((*context)->native_handle());
  ASSERT_NE(ciphers, nullptr);
  int tls12 = 0;
  for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
    const SSL_CIPHER* cipher = sk_SSL_CIPHER_value(ciphers, i);
    if (SSL_CIPHER_get_kx_nid(cipher) == NID_kx_any) continue;
    ++tls12;
    EXPECT_EQ(SSL_CIPHER_get_kx_nid(cipher), NID_kx_ecdhe) << SSL_CIPHER_get_name(cipher);
    EXPECT_EQ(SSL_CIPHER_is_aead(cipher), 1) << SSL_CIPHER_get_name(cipher);
  }
  EXPECT_EQ(tls12, 6);
  EXPECT_EQ(SSL_CTX_get_min_proto_version((*context)->native_handle()), TLS1_2_VERSION);
}

}  // namespace tls_context_test
}  // namespace gpuscale::apiserver::detail
