// Serving certificates: load the configured pair, or keep a self-signed one in --cert-dir as
// k8s.io/apiserver does for prometheus-adapter (apiserver.crt = leaf + its CA, apiserver.key), so a
// server started without certificates still serves HTTPS (the APIService then needs
// insecureSkipTLSVerify or the CA).
//
// Generated pairs: a P-256 CA "<host>-ca@<unix time>" signs a leaf "<host>@<unix time>"
// (ECDSA-SHA256, one year, serverAuth) whose SANs are DNS localhost, DNS <hostname>, IP 127.0.0.1
// (and any extras given).
//
// Thread safety: functions touch the file system; do not call them concurrently for the same
// directory.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/core/result.h"

namespace gpuscale::apiserver {

// What the TLS context is built from.
struct TlsConfig {
  std::string certificateChainPem;  // leaf first
  std::string privateKeyPem;
  std::vector<std::string> clientCaPems;  // bundles client certificates are verified against
  TlsMinVersion minVersion = TlsMinVersion::kTls12;
  std::string cipherList;  // OpenSSL cipher list for TLS 1.2; "" keeps OpenSSL's default

  bool operator==(const TlsConfig&) const = default;
};

struct GeneratedCertificate {
  std::string certificateChainPem;  // leaf + CA
  std::string privateKeyPem;        // the leaf's key
  std::string caPem;
};

// A fresh CA + leaf pair for `host` with the given extra DNS names and IP addresses as SANs.
core::Result<GeneratedCertificate> generateSelfSignedCertificate(
    const std::string& host, const std::vector<std::string>& dnsNames,
    const std::vector<std::string>& ipAddresses);

// The pair loadServingTls generates: CA and leaf for localhost, this host's name and 127.0.0.1.
core::Result<GeneratedCertificate> generateServingCertificate();

// --tls-cert-file/--tls-private-key-file when both are set (one without the other is an error);
// otherwise `inMemory` when given (a program with a read-only file system generates its pair once
// at start and keeps it: generateServingCertificate); otherwise <cert-dir>/apiserver.crt +
// apiserver.key when both are readable; otherwise a generated pair written there (the directory is
// created; the key file is mode 0600). Client CA bundles are read from clientCaFiles. The PEM is
// not validated here; building the TLS context does that.
core::Result<TlsConfig> loadServingTls(const ServerOptions& options,
                                       const GeneratedCertificate* inMemory = nullptr);

// When the first certificate of a PEM chain (the leaf) expires; an error when there is none.
core::Result<std::chrono::system_clock::time_point> certificateNotAfter(
    const std::string& chainPem);

}  // namespace gpuscale::apiserver
