#include "gpuscale/auth/ca_bundle.h"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace gpuscale::auth {
namespace {

using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;

X509Ptr fromDer(const std::string& der) {
  const auto* data = reinterpret_cast<const unsigned char*>(der.data());
  return X509Ptr(d2i_X509(nullptr, &data, static_cast<long>(der.size())), X509_free);
}

std::vector<std::string> subjectEntries(X509* cert, int nid) {
  std::vector<std::string> out;
  X509_NAME* name = X509_get_subject_name(cert);
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, nid, i)) {
    const ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    unsigned char* utf8 = nullptr;
    const int length = ASN1_STRING_to_UTF8(&utf8, value);
    if (length >= 0) out.emplace_back(reinterpret_cast<char*>(utf8), static_cast<size_t>(length));
    OPENSSL_free(utf8);
  }
  return out;
}

}  // namespace

struct CaBundle::Store {
  X509_STORE* store = X509_STORE_new();
  ~Store() { X509_STORE_free(store); }
};

CaBundle::CaBundle(std::string pem, std::unique_ptr<Store> store)
    : pem_(std::move(pem)), store_(std::move(store)) {}
CaBundle::~CaBundle() = default;

core::Result<std::shared_ptr<const CaBundle>> CaBundle::fromPem(const std::string& pem) {
  auto store = std::make_unique<Store>();
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store->store, cert);
    X509_free(cert);
    ++count;
  }
  ERR_clear_error();  // the loop ends on a "no start line" error at the end of the bundle
  if (count == 0) return core::Status::invalid("CA bundle contains no PEM certificate");
  return std::shared_ptr<const CaBundle>(new CaBundle(pem, std::move(store)));
}

core::Result<CertificateIdentity> CaBundle::verify(const apiserver::PeerCertificates& peer) const {
  if (peer.chainDer.empty()) return core::Status::unauthorized("no client certificate");
  X509Ptr leaf = fromDer(peer.chainDer.front());
  if (!leaf) return core::Status::unauthorized("client certificate is not valid DER");
  std::unique_ptr<STACK_OF(X509), void (*)(STACK_OF(X509)*)> intermediates(
      sk_X509_new_null(), [](STACK_OF(X509) * s) { sk_X509_pop_free(s, X509_free); });
  for (size_t i = 1; i < peer.chainDer.size(); ++i) {
    if (X509Ptr cert = fromDer(peer.chainDer[i])) sk_X509_push(intermediates.get(), cert.release());
  }
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(X509_STORE_CTX_new(),
                                                                      X509_STORE_CTX_free);
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store_->store, leaf.get(), intermediates.get()) != 1) {
    return core::Status::internal("cannot set up certificate verification");
  }
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
  if (X509_verify_cert(ctx.get()) != 1) {
    const int error = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return core::Status::unauthorized(fmt::format("client certificate verification failed: {}",
                                                  X509_verify_cert_error_string(error)));
  }
  CertificateIdentity identity;
  const auto names = subjectEntries(leaf.get(), NID_commonName);
  if (!names.empty()) identity.commonName = names.front();
  identity.organizations = subjectEntries(leaf.get(), NID_organizationName);
  return identity;
}

}  // namespace gpuscale::auth
