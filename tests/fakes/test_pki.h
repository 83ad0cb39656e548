// TestPki: certificates made on the fly for authentication tests: CAs, and client certificates
// with chosen CN/O, validity window and extended key usage, signed by one of those CAs.
//
// Thread safety: values; functions are thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace gpuscale::testing {

struct TestCertificate {
  std::string certificatePem;
  std::string privateKeyPem;
  std::string certificateDer;
  std::shared_ptr<void> key;   // EVP_PKEY, to sign with (CAs)
  std::shared_ptr<void> cert;  // X509
};

struct CertificateSpec {
  std::string commonName = "client";
  std::vector<std::string> organizations;
  std::chrono::seconds notBefore{-3600};  // relative to now
  std::chrono::seconds notAfter{3600};
  bool isCa = false;
  bool clientAuth = true;                // ExtKeyUsage clientAuth (else serverAuth only)
  std::vector<std::string> ipAddresses;  // SANs (server certificates)
};

// An existing certificate and key (e.g. a test cluster's CA) to sign with.
TestCertificate loadCertificate(const std::string& certificatePem, const std::string& keyPem);

// Self-signed CA when `issuer` is null.
TestCertificate makeCertificate(const CertificateSpec& spec, const TestCertificate* issuer);
inline TestCertificate makeCa(const std::string& name) {
  CertificateSpec spec;
  spec.commonName = name;
  spec.isCa = true;
  return makeCertificate(spec, nullptr);
}

}  // namespace gpuscale::testing
