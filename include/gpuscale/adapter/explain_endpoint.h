// `/debug/explain`: explain.h over HTTPS, behind the same authentication and authorization as the
// metrics APIs. It is a non-resource path, so in-cluster the delegated authorizer asks a
// SubjectAccessReview with nonResourceAttributes {path: "/debug/explain", verb: "get"} (grant it
// with a ClusterRole rule `nonResourceURLs: ["/debug/explain"], verbs: ["get"]`).
//
// Query parameters: `metric` (only rules with a part in it), `rule` (one rule path), `namespace`
// (example object's namespace), `output` (`json`, the default, or `text`), `sample=false` (no live
// query). Each call asks Prometheus afresh (discovery per distinct seriesQuery, label values and
// one query per rule shown) and adds the adapter's recorded state per rule (RuleStatus: last relist
// success, last discovery and query errors, query counts).
//
// Thread safety: the route is thread-safe; it blocks the calling server worker on Prometheus.
#pragma once

#include <functional>
#include <memory>

#include "gpuscale/adapter/rule_status.h"
#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/prom/client.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter {

inline constexpr std::string_view kExplainPath = "/debug/explain";

struct ExplainEndpointConfig {
  // The rules being served now (called per request).
  std::function<std::shared_ptr<const rules::RuleSet>()> rules;
  // Where to ask; use an uncached client so the live sample is live.
  std::shared_ptr<prom::Client> client;
  // May be null.
  std::shared_ptr<const RuleStatus> status;
  std::chrono::nanoseconds maxAge = std::chrono::minutes(10);
};

apiserver::ExtraRoute explainRoute(ExplainEndpointConfig config);

}  // namespace gpuscale::adapter
