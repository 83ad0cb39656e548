// DelegationOptions: the flags of an aggregated API server that concern the Kubernetes API client
// and delegated authentication/authorization (prometheus-adapter's), and
// buildDelegatedAuth(), which turns them into the Authenticator/Authorizer the HTTPS server calls.
//
//   --lister-kubeconfig  --client-qps (5)  --client-burst (10)
//   --authentication-kubeconfig  --authentication-token-webhook-cache-ttl (10s)
//   --client-ca-file  --requestheader-client-ca-file  --requestheader-username-headers
//   (x-remote-user)  --requestheader-group-headers (x-remote-group)
//   --requestheader-extra-headers-prefix (x-remote-extra-)  --requestheader-allowed-names
//   --authentication-skip-lookup  --authentication-tolerate-lookup-failure
//   --authorization-kubeconfig  --authorization-webhook-cache-authorized-ttl (10s)
//   --authorization-webhook-cache-unauthorized-ttl (10s)  --authorization-always-allow-paths
//   (/healthz,/readyz,/livez)
//   --delegated-reviews-per-second (100; 0 = no limit)  --delegated-reviews-max-waiting (256):
//   bounds on the TokenReviews and SubjectAccessReviews callers can cause (review_limiter.h)
// Lists are comma-separated; durations are Go durations. --client-ca-file and
// --requestheader-client-ca-file are recorded here AND left in the returned arguments, because the
// serving flags (apiserver::parseServingFlags) also need them for the TLS certificate request:
// parse delegation flags first, then serving flags.
//
// An empty --authentication-kubeconfig/--authorization-kubeconfig means in-cluster configuration;
// when that is unavailable too, bearer tokens are rejected and only masters/always-allowed paths
// pass authorization (logged), as k8s.io/apiserver does. An empty --lister-kubeconfig means
// in-cluster, then $KUBECONFIG.
//
// Thread safety: plain values and functions that read files and start background watches.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/apiserver/auth.h"
#include "gpuscale/auth/authentication_config.h"
#include "gpuscale/auth/delegating_authorizer.h"
#include "gpuscale/auth/review_limiter.h"
#include "gpuscale/kube/rest_client.h"

namespace gpuscale::auth {

struct DelegationOptions {
  std::string listerKubeconfig;
  double clientQps = 5;
  int clientBurst = 10;

  std::string authenticationKubeconfig;
  std::chrono::milliseconds tokenCacheTtl{10'000};
  AuthenticationFlags authentication;
  bool skipLookup = false;
  bool tolerateLookupFailure = false;

  std::string authorizationKubeconfig;
  AuthorizerOptions authorization;

  // How long one TokenReview/SubjectAccessReview may take before the request fails closed
  // (k8s.io/apiserver fixes it at 10 s; no flag).
  std::chrono::seconds reviewTimeout{10};

  // Given to every Kubernetes client built here (lister, reviews, the ConfigMap watch) for
  // /metrics; null: none.
  std::shared_ptr<kube::ClientObserver> observer;
  // Counts the review caches' hits and misses for /metrics; null: none.
  std::shared_ptr<ReviewCacheMetrics> reviewCacheMetrics;

  // Bounds on reviews (flags above); `reviewLimiter`, when set, is used instead of a new limiter
  // built from `reviewLimits` (so its metrics can be registered).
  ReviewLimits reviewLimits;
  std::shared_ptr<ReviewLimiter> reviewLimiter;
};

// Applies one flag (`name` without dashes): false when it is not a delegation flag, an error when
// the value is invalid.
core::Result<bool> applyDelegationFlag(DelegationOptions& options, std::string_view name,
                                       std::string_view value);
bool isBooleanDelegationFlag(std::string_view name);
// Consumes delegation flags from argv-style `args`; returns the others in order (see above for the
// two CA flags).
core::Result<std::vector<std::string>> parseDelegationFlags(const std::vector<std::string>& args,
                                                            DelegationOptions& options);
std::string delegationFlagsUsage();

struct DelegatedAuth {
  std::shared_ptr<apiserver::Authenticator> authenticator;
  std::shared_ptr<apiserver::Authorizer> authorizer;
  // Watches kube-system/extension-apiserver-authentication while alive (null with flags only).
  std::shared_ptr<AuthenticationConfigSource> config;
};

// Reads CA files, loads the kubeconfigs, reads (and starts watching) the authentication ConfigMap
// unless skipped. Errors: unreadable files, a failed ConfigMap lookup unless tolerated.
core::Result<DelegatedAuth> buildDelegatedAuth(const DelegationOptions& options);

// The client the adapter lists and watches with (--lister-kubeconfig, --client-qps/--client-burst).
core::Result<std::shared_ptr<kube::RestKubeClient>> buildListerClient(
    const DelegationOptions& options);

}  // namespace gpuscale::auth
