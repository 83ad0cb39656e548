// `/debug/explain`: explain.h over HTTPS, behind the same authentication and authorization as the
// metrics APIs. It is a non-resource path, so in-cluster the delegated authorizer asks a
// SubjectAccessReview with nonResourceAttributes {path: "/debug/explain", verb: "get"} (grant it
// with a ClusterRole rule `nonResourceURLs: ["/debug/explain"], verbs: ["get"]`).
//
// Query parameters: `metric` (only rules with a part in it), `rule` (one rule path), `namespace`
// (example object's namespace), `output` (`json`, the default, or `text`), `sample=false` (no live
// query). Each call asks each rule's backend afresh through its uncached client (discovery per
// distinct (backend, seriesQuery), label values and one query per rule shown) and adds the
// adapter's recorded state per rule (RuleStatus: last relist success, last discovery and query
// errors, query counts).
//
// Thread safety: the route is thread-safe; it blocks the calling server worker on Prometheus.
#pragma once

#include <functional>
#include <memory>

#include "gpuscale/adapter/backend.h"
#include "gpuscale/adapter/rule_status.h"
#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter {

inline constexpr std::string_view kExplainPath = "/debug/explain";

// The rules being served now and the backends they query, of one generation.
struct ExplainSource {
  std::shared_ptr<const rules::RuleSet> rules;
  std::shared_ptr<const BackendSet> backends;  // each asked through its discovery (uncached) client
};

struct ExplainEndpointConfig {
  // What is served now (called per request).
  std::function<ExplainSource()> source;
  // May be null.
  std::shared_ptr<const RuleStatus> status;
  std::chrono::nanoseconds maxAge = std::chrono::minutes(10);
};

apiserver::ExtraRoute explainRoute(ExplainEndpointConfig config);

}  // namespace gpuscale::adapter
