// TokenReviewer: bearer-token authentication delegated to kube-apiserver with a TokenReview
// (authentication.k8s.io/v1), the answers cached for a TTL keyed by the token's SHA-256.
//
// Both "authenticated" and "not authenticated" answers are cached; errors (API down, timeout,
// malformed answer) are not, and surface as an error value so the caller fails closed. The client's
// request timeout bounds how long a review can take (10 s as k8s.io/apiserver).
//
// Thread safety: thread-safe; review() blocks the calling thread for the API round trip on a cache
// miss.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "gpuscale/apiserver/auth.h"
#include "gpuscale/auth/review_cache_metrics.h"
#include "gpuscale/auth/ttl_cache.h"
#include "gpuscale/kube/client.h"

namespace gpuscale::auth {

class TokenReviewer {
 public:
  // `metrics` may be null.
  TokenReviewer(std::shared_ptr<kube::KubeClient> client, std::chrono::milliseconds ttl,
                std::shared_ptr<ReviewCacheMetrics> metrics = nullptr);

  // The user when the token is valid; nullopt when kube-apiserver says it is not; an error when
  // the review could not be done.
  core::Result<std::optional<apiserver::UserInfo>> review(const std::string& token);

 private:
  std::shared_ptr<kube::KubeClient> client_;
  std::chrono::milliseconds ttl_;
  std::shared_ptr<ReviewCacheMetrics> metrics_;
  TtlCache<std::optional<apiserver::UserInfo>> cache_;
};

// The UserInfo in a TokenReview/user-info object ({username, uid, groups, extra}).
apiserver::UserInfo userFromObject(const kube::Object& user);

}  // namespace gpuscale::auth
