// The TLS listener of an aggregated API server names, in its CertificateRequest, every CA the
// DelegatingAuthenticator trusts: the union of the serving flags' --client-ca-file and
// --requestheader-client-ca-file bundles and the client and request-header CAs of the current
// AuthenticationConfig (from the flags, or from the extension-apiserver-authentication ConfigMap
// where the flags do not give them). Go clients such as kube-apiserver's front proxy send a
// certificate only when its issuer is named, so a CA learnt from the ConfigMap must be listed.
// Handshakes never fail on an unknown CA: the authenticator decides (tls_context.h).
//
// servingTlsWithClientCas() builds the apiserver::ServingTls the adapter serves with: its loader
// re-reads the serving certificate and key (loadServingTls), re-reads the flags' CA files through
// the source (AuthenticationConfigSource::reloadFiles, so the authenticator verifies against the
// same rotated CAs), refuses to change anything while the source's last update was rejected (a bad
// PEM keeps the old context; ServingTls logs and counts it), and takes the union above. The
// source's changes (a ConfigMap update) wake the ServingTls at once.
//
// Thread safety: the loader may run on any thread; the source and ServingTls are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/apiserver/serving_tls.h"
#include "gpuscale/auth/authentication_config.h"

namespace gpuscale::auth {

// `pems` followed by the bundles of `more` not already in it (exact text), in order.
std::vector<std::string> unionOfPemBundles(std::vector<std::string> pems,
                                           const std::vector<std::string>& more);

// The loader described above; `source` may be null (standalone: the flags' files only).
// `inMemory`, when given, is the serving pair unless certificate files are set (loadServingTls).
apiserver::TlsConfigLoader servingTlsLoader(
    apiserver::ServerOptions options, std::shared_ptr<AuthenticationConfigSource> source,
    std::shared_ptr<const apiserver::GeneratedCertificate> inMemory = nullptr);

// A ServingTls with that loader, woken by the source's changes. Errors: the first load.
core::Result<std::shared_ptr<apiserver::ServingTls>> servingTlsWithClientCas(
    const apiserver::ServerOptions& options, std::shared_ptr<AuthenticationConfigSource> source,
    const std::shared_ptr<prometheus::Registry>& registry,
    std::shared_ptr<const apiserver::GeneratedCertificate> inMemory = nullptr);

}  // namespace gpuscale::auth
