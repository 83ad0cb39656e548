// SecureStatusServer: a program's own status pages (its `/metrics` and routes such as the
// reconciler's `/plan` and `/leader`) over HTTPS, behind the delegated authentication and
// authorization of an aggregated API server, as Kubernetes components serve theirs (the secure
// port of kube-controller-manager, controller-runtime's authenticated metrics):
//   - authentication (delegating_authenticator.h): a bearer token is checked with a TokenReview, a
//     client certificate against the client CA (flag, or the extension-apiserver-authentication
//     ConfigMap); a request without credentials is system:anonymous;
//   - authorization (delegating_authorizer.h): a SubjectAccessReview for the non-resource URL
//     {path, verb "get"}, so access is granted with a ClusterRole rule such as
//     `nonResourceURLs: ["/metrics"], verbs: ["get"]`; system:masters pass without a review;
//   - both answers are cached for their TTLs (--authentication-token-webhook-cache-ttl,
//     --authorization-webhook-cache-{authorized,unauthorized}-ttl); a review that cannot be done
//     fails closed (500), never open;
//   - /healthz, /livez and /readyz stay open (the authorizer's always-allowed paths; kubelet probes
//     carry no credentials), answered without any review.
// It is an apiserver::ApiHandler with no metrics API groups and the pages as extra routes, on an
// apiserver::HttpsServer: the same request parsing, limits, deadlines and 401/403 bodies as the
// adapter's secure port (https_server.h, api_handler.h).
//
// TLS: --tls-cert-file/--tls-private-key-file when given; otherwise the pair in `certDir` (kept
// there, generated on first start); with an empty `certDir` a self-signed pair generated at start
// and kept in memory only (for read-only root file systems). Clients of a generated certificate
// must skip verification, so a token they send could reach an impostor on the pod network: give a
// certificate the scraper can verify (a Secret mounted as the cert files) where that matters.
// Files are re-read every tlsReloadInterval (serving_tls.h; reload metrics on the pages'
// registry).
//
// Thread safety: start()/stop() from one controlling thread; port() from any. The pages' routes
// and health checks are called concurrently from the server's handler threads.
#pragma once

#include <prometheus/registry.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/health.h"
#include "gpuscale/apiserver/server_options.h"
#include "gpuscale/auth/delegation_options.h"
#include "gpuscale/core/result.h"

namespace gpuscale::apiserver {
class HttpsServer;
class ServingTls;
}  // namespace gpuscale::apiserver

namespace gpuscale::auth {

struct StatusPages {
  // GET paths served after authentication and authorization (exact match).
  std::map<std::string, apiserver::ExtraRoute> routes;
  // /healthz, /livez, /readyz; null: ping (and shutdown on readyz) only.
  std::shared_ptr<apiserver::HealthChecks> health;
  // Serialised on /metrics; the server's request, connection and TLS families are added to it.
  // Null: a new one.
  std::shared_ptr<prometheus::Registry> registry;
};

struct SecureStatusOptions {
  // bindAddress/securePort, TLS files or certDir ("" = generated in memory), limits, timeouts.
  apiserver::ServerOptions server;
  // The --authentication-*, --authorization-*, --client-ca-file and --requestheader-* flags
  // (DelegationOptions::addReviewFlags).
  DelegationOptions delegation;
};

class SecureStatusServer {
 public:
  // Builds the delegated authentication and authorization (buildDelegatedAuth: reads CA files,
  // the kubeconfigs, the authentication ConfigMap unless skipped), the TLS material, binds and
  // serves. Errors: those of buildDelegatedAuth, unreadable or bad TLS material, a bad or busy
  // address.
  static core::Result<std::unique_ptr<SecureStatusServer>> start(const SecureStatusOptions& options,
                                                                 StatusPages pages);
  // The same with authentication and authorization built elsewhere (tests); `auth.config` may be
  // null (no client CAs named in the TLS handshake beyond the server's clientCaFiles).
  static core::Result<std::unique_ptr<SecureStatusServer>> start(
      const apiserver::ServerOptions& server, StatusPages pages, DelegatedAuth auth);

  ~SecureStatusServer();  // stops
  SecureStatusServer(const SecureStatusServer&) = delete;
  SecureStatusServer& operator=(const SecureStatusServer&) = delete;

  uint16_t port() const;
  // Readiness fails from now on; in-flight requests finish within the server's shutdownTimeout.
  // Safe to call more than once.
  void stop();

 private:
  SecureStatusServer() = default;

  DelegatedAuth auth_;  // keeps the ConfigMap watch alive
  std::shared_ptr<apiserver::ServingTls> tls_;
  std::shared_ptr<apiserver::ApiHandler> handler_;
  std::unique_ptr<apiserver::HttpsServer> server_;
  std::chrono::milliseconds shutdownTimeout_{0};
  bool stopped_ = false;
};

}  // namespace gpuscale::auth
