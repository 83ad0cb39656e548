#include "fakes/test_pki.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <stdexcept>

namespace gpuscale::testing {
namespace {

std::string bioText(BIO* bio) {
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(length));
}

void addExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) throw std::runtime_error("bad extension " + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

}  // namespace

TestCertificate makeCertificate(const CertificateSpec& spec, const TestCertificate* issuer) {
  static std::atomic<long> serial{1000};
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert), static_cast<long>(spec.notBefore.count()));
  X509_gmtime_adj(X509_getm_notAfter(cert), static_cast<long>(spec.notAfter.count()));
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  for (const auto& org : spec.organizations) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(org.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(spec.commonName.c_str()), -1,
                             -1, 0);
  X509* issuerCert = issuer ? static_cast<X509*>(issuer->cert.get()) : cert;
  EVP_PKEY* issuerKey = issuer ? static_cast<EVP_PKEY*>(issuer->key.get()) : key;
  X509_set_issuer_name(cert, X509_get_subject_name(issuerCert));
  if (spec.isCa) {
    addExtension(cert, issuerCert, NID_basic_constraints, "critical,CA:TRUE");
    addExtension(cert, issuerCert, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    addExtension(cert, issuerCert, NID_basic_constraints, "critical,CA:FALSE");
    addExtension(cert, issuerCert, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    addExtension(cert, issuerCert, NID_ext_key_usage,
                 spec.clientAuth ? "clientAuth" : "serverAuth");
  }
  if (!spec.ipAddresses.empty()) {
    std::string sans;
    for (const auto& ip : spec.ipAddresses) sans += (sans.empty() ? "IP:" : ",IP:") + ip;
    addExtension(cert, issuerCert, NID_subject_alt_name, sans);
  }
  X509_sign(cert, issuerKey, EVP_sha256());

  TestCertificate out;
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  out.certificatePem = bioText(bio);
  BIO_free(bio);
  bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  out.privateKeyPem = bioText(bio);
  BIO_free(bio);
  unsigned char* der = nullptr;
  const int length = i2d_X509(cert, &der);
  out.certificateDer.assign(reinterpret_cast<char*>(der), static_cast<size_t>(length));
  OPENSSL_free(der);
  out.key = std::shared_ptr<void>(key, [](void* p) { EVP_PKEY_free(static_cast<EVP_PKEY*>(p)); });
  out.cert = std::shared_ptr<void>(cert, [](void* p) { X509_free(static_cast<X509*>(p)); });
  return out;
}

TestCertificate loadCertificate(const std::string& certificatePem, const std::string& keyPem) {
  TestCertificate out;
  out.certificatePem = certificatePem;
  out.privateKeyPem = keyPem;
  BIO* bio = BIO_new_mem_buf(certificatePem.data(), static_cast<int>(certificatePem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  bio = BIO_new_mem_buf(keyPem.data(), static_cast<int>(keyPem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (cert == nullptr || key == nullptr) throw std::runtime_error("unreadable certificate or key");
  out.key = std::shared_ptr<void>(key, [](void* p) { EVP_PKEY_free(static_cast<EVP_PKEY*>(p)); });
  out.cert = std::shared_ptr<void>(cert, [](void* p) { X509_free(static_cast<X509*>(p)); });
  return out;
}

}  // namespace gpuscale::testing
