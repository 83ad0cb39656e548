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
// --requestheader-client-ca-file are read here AND by the serving flags
// (apiserver::ServerOptions::addFlags), which name the CAs in the TLS certificate request: declared
// by both groups on one core::FlagSet, each flag sets both values.
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
#include "gpuscale/core/flag_set.h"
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

  // Declares every flag above on `flags`: the lister's and addReviewFlags'.
  void addFlags(core::FlagSet& flags);
  // Declares the flags of delegated authentication and authorization only (not --lister-kubeconfig,
  // --client-qps, --client-burst): what a program with its own Kubernetes client takes for its
  // status listener.
  void addReviewFlags(core::FlagSet& flags);
};

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
