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
// Per-namespace authorization: being allowed the path is not enough to see a namespace's data. The
// example object and live sample of each rule are shown only if the caller may make the metric
// request they stand for: the same SubjectAccessReview (through the server's authorizer, cached)
// as that request, built by sampleRequestInfo() from the real path, e.g. `get` on
// `pods/<metric>` (name "*") of custom.metrics.k8s.io in the namespace, `get` on `metrics`/<metric>
// for a namespace object, or `list` on `<metric>` of external.metrics.k8s.io in the namespace.
//  - `namespace` named by the caller (a DNS label, else 400): any refusal refuses the whole request
//    with that 403 Status (Kubernetes' forbidden message naming the resource and namespace); narrow
//    it with `metric` or `rule`.
//  - no `namespace`: the namespace picked from Prometheus' data is checked the same way; a refused
//    rule shows no object name, PromQL or sample, and its example error asks for a namespace (not
//    naming the one picked). An external rule that is not namespaced stands for a request in the
//    namespace named, so it shows a sample only when one is.
// Discovery results (metric names, label names, drop reasons) are shown to anyone allowed the path.
//
// Thread safety: the route is thread-safe; it blocks the calling server worker on Prometheus.
#pragma once

#include <functional>
#include <memory>

#include "gpuscale/adapter/backend.h"
#include "gpuscale/adapter/explain.h"
#include "gpuscale/adapter/rule_status.h"
#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/auth.h"
#include "gpuscale/apiserver/request_info.h"
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
  // Decides which namespaces' samples a caller may see (above); null: every sample is shown
  // (standalone mode, where every caller may read every metric anyway).
  std::shared_ptr<apiserver::Authorizer> authorizer;
  // The relister's discovery options.
  prom::DiscoveryOptions discovery;
};

apiserver::ExtraRoute explainRoute(ExplainEndpointConfig config);

// The RequestInfo of the metric request a sample of `scope` stands for (see above). Errors: a
// metric, resource or namespace that cannot be a path segment, or a namespaced scope without a
// namespace.
core::Result<apiserver::RequestInfo> sampleRequestInfo(const SampleScope& scope);

}  // namespace gpuscale::adapter
