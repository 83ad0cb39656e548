#include "gpuscale/apiserver/certificates.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "gpuscale/core/files.h"

namespace gpuscale::apiserver {
namespace {

using core::Result;
using core::Status;

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

Status opensslError(std::string_view what) { return Status::internal(std::string(what)); }

std::string bioText(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(size));
}

Result<std::string> certificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return opensslError("writing certificate");
  return bioText(bio.get());
}

Result<std::string> privateKeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return opensslError("writing private key");
  }
  return bioText(bio.get());
}

bool addExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (extension == nullptr) return false;
  const bool added = X509_add_ext(cert, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return added;
}

// A certificate for `subjectKey` named `commonName`, signed by `issuerKey` (self-signed when issuer
// is null).
Result<CertPtr> makeCertificate(EVP_PKEY* subjectKey, const std::string& commonName, X509* issuer,
                                EVP_PKEY* issuerKey,
                                const std::vector<std::pair<int, std::string>>& extensions) {
  CertPtr cert(X509_new());
  if (!cert) return opensslError("allocating certificate");
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return opensslError("random serial");
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  const bool serialOk = bn != nullptr && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  if (!serialOk) return opensslError("setting serial");
  X509_set_version(cert.get(), 2);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(commonName.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  X509_set_pubkey(cert.get(), subjectKey);
  for (const auto& [nid, value] : extensions) {
    if (!addExtension(cert.get(), issuer ? issuer : cert.get(), nid, value)) {
      return opensslError("adding certificate extension");
    }
  }
  if (X509_sign(cert.get(), issuerKey, EVP_sha256()) == 0)
    return opensslError("signing certificate");
  return cert;
}

// The mode is set before the content is written so a private key is never readable by others.
Status writeFile(const std::filesystem::path& path, const std::string& content, mode_t mode) {
  const Status failed = Status::invalid("cannot write " + path.string());
  {
    std::ofstream create(path, std::ios::binary | std::ios::trunc);
    if (!create) return failed;
  }
  if (::chmod(path.c_str(), mode) != 0) return failed;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  return out ? Status() : failed;
}

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace

Result<GeneratedCertificate> generateSelfSignedCertificate(
    const std::string& host, const std::vector<std::string>& dnsNames,
    const std::vector<std::string>& ipAddresses) {
  KeyPtr caKey(EVP_EC_gen("P-256"));
  KeyPtr leafKey(EVP_EC_gen("P-256"));
  if (!caKey || !leafKey) return opensslError("generating keys");
  const std::string stamp = "@" + std::to_string(std::time(nullptr));

  auto ca = makeCertificate(caKey.get(), host + "-ca" + stamp, nullptr, caKey.get(),
                            {{NID_basic_constraints, "critical,CA:TRUE"},
                             {NID_key_usage, "critical,digitalSignature,keyCertSign"},
                             {NID_subject_key_identifier, "hash"}});
  if (!ca) return ca.status();

  std::string san;
  for (const auto& dns : dnsNames) san += (san.empty() ? "DNS:" : ",DNS:") + dns;
  for (const auto& ip : ipAddresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
  std::vector<std::pair<int, std::string>> leafExtensions = {
      {NID_basic_constraints, "critical,CA:FALSE"},
      {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
      {NID_ext_key_usage, "serverAuth"},
      {NID_authority_key_identifier, "keyid"}};
  if (!san.empty()) leafExtensions.emplace_back(NID_subject_alt_name, san);
  auto leaf = makeCertificate(leafKey.get(), host + stamp, ca->get(), caKey.get(), leafExtensions);
  if (!leaf) return leaf.status();

  auto leafPem = certificatePem(leaf->get());
  auto caPem = certificatePem(ca->get());
  auto keyPem = privateKeyPem(leafKey.get());
  if (!leafPem) return leafPem.status();
  if (!caPem) return caPem.status();
  if (!keyPem) return keyPem.status();
  return GeneratedCertificate{*leafPem + *caPem, *keyPem, *caPem};
}

Result<GeneratedCertificate> generateServingCertificate() {
  std::vector<std::string> dnsNames = {"localhost"};
  if (const std::string host = hostName(); !host.empty() && host != "localhost") {
    dnsNames.push_back(host);
  }
  auto generated = generateSelfSignedCertificate("localhost", dnsNames, {"127.0.0.1"});
  // A host name OpenSSL will not take as a DNS SAN must not keep the server from starting.
  if (!generated && dnsNames.size() > 1) {
    generated = generateSelfSignedCertificate("localhost", {"localhost"}, {"127.0.0.1"});
  }
  return generated;
}

Result<TlsConfig> loadServingTls(const ServerOptions& options,
                                 const GeneratedCertificate* inMemory) {
  TlsConfig config;
  config.minVersion = options.tlsMinVersion;
  config.cipherList = options.tlsCipherList;
  for (const auto& file : options.clientCaFiles) {
    auto pem = core::readFile(file);
    if (!pem) return Status::invalid("--client-ca-file: cannot read " + file);
    config.clientCaPems.push_back(std::move(*pem));
  }

  if (!options.tlsCertFile.empty() || !options.tlsPrivateKeyFile.empty()) {
    if (options.tlsCertFile.empty() || options.tlsPrivateKeyFile.empty()) {
      return Status::invalid("--tls-cert-file and --tls-private-key-file must be given together");
    }
    auto cert = core::readFile(options.tlsCertFile);
    if (!cert) return cert.status();
    auto key = core::readFile(options.tlsPrivateKeyFile);
    if (!key) return key.status();
    config.certificateChainPem = std::move(*cert);
    config.privateKeyPem = std::move(*key);
    return config;
  }

  if (inMemory != nullptr) {
    config.certificateChainPem = inMemory->certificateChainPem;
    config.privateKeyPem = inMemory->privateKeyPem;
    return config;
  }

  const std::filesystem::path dir(options.certDir);
  const auto certPath = dir / "apiserver.crt";
  const auto keyPath = dir / "apiserver.key";
  auto cert = core::readFile(certPath.string());
  auto key = core::readFile(keyPath.string());
  if (cert && key && !cert->empty() && !key->empty()) {
    config.certificateChainPem = std::move(*cert);
    config.privateKeyPem = std::move(*key);
    return config;
  }

  auto generated = generateServingCertificate();
  if (!generated) return generated.status();
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return Status::invalid("--cert-dir: cannot create " + dir.string());
  if (Status written = writeFile(certPath, generated->certificateChainPem, 0644); !written.ok()) {
    return written;
  }
  if (Status written = writeFile(keyPath, generated->privateKeyPem, 0600); !written.ok()) {
    return written;
  }
  config.certificateChainPem = std::move(generated->certificateChainPem);
  config.privateKeyPem = std::move(generated->privateKeyPem);
  return config;
}

core::Result<std::chrono::system_clock::time_point> certificateNotAfter(
    const std::string& chainPem) {
  BioPtr bio(BIO_new_mem_buf(chainPem.data(), static_cast<int>(chainPem.size())));
  CertPtr cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!cert) return core::Status::invalid("no certificate in the PEM data");
  std::tm notAfter{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &notAfter) != 1) {
    return core::Status::invalid("the certificate's notAfter does not parse");
  }
  return std::chrono::system_clock::from_time_t(timegm(&notAfter));
}

}  // namespace gpuscale::apiserver
