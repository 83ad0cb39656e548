// DelegatingAuthorizer: the apiserver::Authorizer of an aggregated API server (k8s.io/apiserver's
// delegating authorizer), in order:
//   1. users in the group system:masters are allowed (no review; the aggregator's availability
//      checks come as system:masters);
//   2. non-resource requests whose path is in the always-allowed list are allowed (exact match, or
//   a
//      prefix when the entry ends in '*'; default /healthz, /readyz, /livez);
//   3. otherwise a SubjectAccessReview (authorization.k8s.io/v1) with the user and the request's
//      exact attributes from RequestInfo (resourceAttributes {namespace, verb, group, version,
//      resource, subresource, name} or nonResourceAttributes {path, verb}); allowed answers are
//      cached for `allowedTtl`, denied ones for `deniedTtl`, in two caches of `cacheSize` entries
//      each (CachedReviews), so denials of a flood of anonymous paths never push out allowed
//      answers; concurrent requests for the same review share it, and with a ReviewLimiter a
//      review beyond its bounds is refused with 429.
// A review that cannot be done (API down, slow beyond the client's timeout, a malformed answer)
// fails closed: an InternalError Status naming the cause, never an allow.
//
// Thread safety: thread-safe; authorize() may block for a review on a cache miss, authorizeAsync()
// never blocks.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuscale/apiserver/auth.h"
#include "gpuscale/auth/cached_reviews.h"
#include "gpuscale/auth/review_cache_metrics.h"
#include "gpuscale/kube/client.h"

namespace gpuscale::auth {

struct AuthorizerOptions {
  std::vector<std::string> alwaysAllowPaths{"/healthz", "/readyz", "/livez"};
  std::vector<std::string> alwaysAllowGroups{"system:masters"};
  std::chrono::milliseconds allowedTtl{10'000};
  std::chrono::milliseconds deniedTtl{10'000};
  // Most answers kept, allowed and denied each; when full, the soonest to expire go first.
  size_t cacheSize = 4096;
  // Counts cache hits and misses; may be null.
  std::shared_ptr<ReviewCacheMetrics> metrics;
  // Bounds the reviews (shared with the TokenReviewer); may be null.
  std::shared_ptr<ReviewLimiter> limiter;
  // The cache's time source (tests use a fake one).
  CacheClock clock = std::chrono::steady_clock::now;
};

class DelegatingAuthorizer final : public apiserver::Authorizer {
 public:
  // `client` may be null: then every request not allowed by rules 1-2 is denied.
  DelegatingAuthorizer(std::shared_ptr<kube::KubeClient> client, AuthorizerOptions options);

  core::Result<apiserver::AuthorizationDecision> authorize(
      const apiserver::UserInfo& user, const apiserver::RequestInfo& info) override;
  void authorizeAsync(
      const apiserver::UserInfo& user, const apiserver::RequestInfo& info,
      std::chrono::steady_clock::time_point deadline,
      std::function<void(core::Result<apiserver::AuthorizationDecision>)> done) override;

 private:
  // Rules 1-2 (and "no client"), or nullopt when a review decides.
  std::optional<apiserver::AuthorizationDecision> withoutReview(
      const apiserver::UserInfo& user, const apiserver::RequestInfo& info) const;

  std::shared_ptr<kube::KubeClient> client_;
  AuthorizerOptions options_;
  CachedReviews<apiserver::AuthorizationDecision> cache_;
};

// The key of the answer cache: every field the SubjectAccessReview sends, length-prefixed (two
// reviews with the same key send the same spec). Built per request, so no JSON.
std::string reviewCacheKey(const apiserver::UserInfo& user, const apiserver::RequestInfo& info);

// The SubjectAccessReview request body for `user` doing `info`.
nlohmann::ordered_json subjectAccessReview(const apiserver::UserInfo& user,
                                           const apiserver::RequestInfo& info);

}  // namespace gpuscale::auth
