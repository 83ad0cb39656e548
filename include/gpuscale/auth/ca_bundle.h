// CaBundle: a set of trusted CA certificates (a PEM bundle, as --client-ca-file and
// --requestheader-client-ca-file give them) and the verification of a TLS peer's certificate chain
// against exactly that set, for client authentication.
//
// verify() checks the chain the peer presented (leaf first, intermediates after) with OpenSSL:
// signatures up to a CA of this bundle, validity period at the current time, and the SSL-client
// purpose (ExtKeyUsage clientAuth when the leaf has an ExtKeyUsage extension), as Go's
// x509.Verify with KeyUsages ClientAuth does. It never trusts the server's own verdict
// (PeerCertificates::verified, which is against the union of all client CAs): each authenticator
// verifies against its own CA.
//
// Thread safety: immutable after construction; verify() may run concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpuscale/apiserver/http_message.h"
#include "gpuscale/core/result.h"

namespace gpuscale::auth {

struct CertificateIdentity {
  std::string commonName;
  std::vector<std::string> organizations;
};

class CaBundle {
 public:
  // Error when the PEM holds no certificate.
  static core::Result<std::shared_ptr<const CaBundle>> fromPem(const std::string& pem);
  ~CaBundle();

  // The leaf's identity when the chain verifies; otherwise Unauthorized with OpenSSL's reason.
  core::Result<CertificateIdentity> verify(const apiserver::PeerCertificates& peer) const;
  const std::string& pem() const { return pem_; }

 private:
  struct Store;
  CaBundle(std::string pem, std::unique_ptr<Store> store);
  std::string pem_;
  std::unique_ptr<Store> store_;
};

}  // namespace gpuscale::auth
