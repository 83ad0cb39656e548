// ReviewCacheMetrics: how often delegated authentication and authorization were answered from
// their caches (TokenReviewer, DelegatingAuthorizer) instead of a round trip to kube-apiserver.
//   gpuscale_auth_review_cache_lookups_total{review,result}   counter
// review: "token" (TokenReview) | "subject_access" (SubjectAccessReview); result: "hit" | "miss".
// A miss is followed by a review; hits / (hits + misses) is the share of requests that cost no
// kube-apiserver call for their authentication or authorization.
//
// Thread safety: thread-safe (the counters are atomic).
#pragma once

#include <memory>

namespace prometheus {
class Counter;
class Registry;
}  // namespace prometheus

namespace gpuscale::auth {

enum class Review { kToken, kSubjectAccess };

class ReviewCacheMetrics {
 public:
  explicit ReviewCacheMetrics(std::shared_ptr<prometheus::Registry> registry);

  void lookup(Review review, bool hit);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* counters_[2][2];  // [review][hit]
};

}  // namespace gpuscale::auth
