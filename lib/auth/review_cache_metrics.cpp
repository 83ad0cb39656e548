#include "gpuscale/auth/review_cache_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "gpuscale/core/metric_families.h"

namespace gpuscale::auth {

ReviewCacheMetrics::ReviewCacheMetrics(std::shared_ptr<prometheus::Registry> registry)
    : registry_(std::move(registry)) {
  auto& family =
      core::counterFamily(*registry_, "gpuscale_auth_review_cache_lookups_total",
                          "Delegated authentication (token) and authorization (subject_access) "
                          "answers looked up in their caches, by result (hit, miss).");
  const char* reviews[] = {"token", "subject_access"};
  const char* results[] = {"miss", "hit"};
  for (int review = 0; review < 2; ++review) {
    for (int hit = 0; hit < 2; ++hit) {
      counters_[review][hit] = &family.Add({{"review", reviews[review]}, {"result", results[hit]}});
    }
  }
}

void ReviewCacheMetrics::lookup(Review review, bool hit) {
  counters_[review == Review::kToken ? 0 : 1][hit ? 1 : 0]->Increment();
}

}  // namespace gpuscale::auth
