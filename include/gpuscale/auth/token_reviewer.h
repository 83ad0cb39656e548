// TokenReviewer: bearer-token authentication delegated to kube-apiserver with a TokenReview
// (authentication.k8s.io/v1), the answers cached keyed by the token's SHA-256 (CachedReviews).
//
// "Authenticated" answers are kept for `ttl` in one cache, "not authenticated" ones (invalid
// tokens) for `ttl` in another, each bounded, so junk tokens are remembered briefly and never push
// out valid ones. Errors (API down, timeout, malformed answer) are not cached and surface as an
// error value so the caller fails closed. The client's request timeout bounds how long a review
// can take (10 s as k8s.io/apiserver). With a ReviewLimiter, reviews are bounded in rate and in
// waiting requests; a refusal is a 429 Status (review_limiter.h).
//
// Thread safety: thread-safe. reviewAsync() never blocks; review() blocks the calling thread for
// the API round trip on a cache miss.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "gpuscale/apiserver/auth.h"
#include "gpuscale/auth/cached_reviews.h"
#include "gpuscale/kube/client.h"

namespace gpuscale::auth {

class TokenReviewer {
 public:
  // The user when the token is valid; nullopt when kube-apiserver says it is not; an error when
  // the review could not be done (429 when the limiter refused it).
  using Answer = core::Result<std::optional<apiserver::UserInfo>>;

  // `metrics` and `limiter` may be null.
  TokenReviewer(std::shared_ptr<kube::KubeClient> client, std::chrono::milliseconds ttl,
                std::shared_ptr<ReviewCacheMetrics> metrics = nullptr,
                std::shared_ptr<ReviewLimiter> limiter = nullptr);

  Answer review(const std::string& token);
  // `done` runs once: before this returns for a cached answer or a refusal, else on the thread
  // that delivers the review's answer.
  void reviewAsync(const std::string& token, std::function<void(Answer)> done);

 private:
  std::shared_ptr<kube::KubeClient> client_;
  CachedReviews<std::optional<apiserver::UserInfo>> cache_;
};

// The UserInfo in a TokenReview/user-info object ({username, uid, groups, extra}).
apiserver::UserInfo userFromObject(const kube::Object& user);

}  // namespace gpuscale::auth
