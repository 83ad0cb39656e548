// Explain: the answer to "why is my metric not there", per rule. Shared by
// `gpuscale-adapter explain` (explain_command.h) and the authenticated `/debug/explain` endpoint
// (explain_endpoint.h).
//
// For every rule (custom and external, file order) an explanation holds:
//  - the backend the rule names (`default`: the --prometheus-* flags' server). Every call made for
//    the rule (discovery, label values, the live sample) goes to that backend, with its own URL,
//    headers and credentials, exactly as the relister and the providers do;
//  - the series query sent (the rule's seriesQuery, through the same label-API discovery as the
//    relister, prom/discovery.h; one call per distinct (backend, seriesQuery)) and how many metric
//    names it matched in the window;
//  - every metric name that was dropped, grouped by reason with counts and a few examples:
//      "filter"                 a seriesFilters is/isNot (or the implicit name.matches filter)
//                               failed; `filter` is its path, e.g. rules[0].seriesFilters[1].isNot
//      "unsafe_name"            not a classic metric name while metricsQuery uses .Series
//      "no_resource_label"      custom rules: none of the series' labels is a resource label (the
//                               override labels, or a label the template reads)
//      "unresolvable_resource"  custom rules: a label fits the template but names no known
//                               resource (e.g. `pod_name` → "pod_names")
//    (registry.h counts the same outcomes; RuleStats and these counts agree by construction and by
//    test);
//  - the metric names and resources produced (as the registry would register them);
//  - a rendered example PromQL for a sample object (a real label value Prometheus has for the
//    resource label, in the given or first namespace) and a live sample: the query run once, its
//    first samples, an empty result, or the error;
//  - the last error: the discovery error of this explanation, the sample query's error, and (for
//    the endpoint) the adapter's last recorded discovery and query errors (rule_status.h).
// The example object and the live sample are a namespace's data: with options.authorizeSample set,
// a rule whose example the caller may not see gets the refusal as its example's error and no
// object name, PromQL or sample.
//
// explainDiscovery() is pure (table-driven tests); explain() does the Prometheus calls.
//
// Thread safety: functions; explain() blocks on Prometheus (call it from a thread that may wait,
// never from a prom::Client callback).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpuscale/adapter/backend.h"
#include "gpuscale/adapter/rule_status.h"
#include "gpuscale/prom/client.h"
#include "gpuscale/prom/discovery.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter {

// Whose data an example and a live sample of a rule would show: the metric, the kind of rule, the
// resource (custom rules) and the namespace ("" for a cluster-scoped object or an external rule
// that is not namespaced).
struct SampleScope {
  rules::RuleKind kind = rules::RuleKind::kCustom;
  std::string metric;
  k8s::GroupResource resource;  // custom rules
  bool namespaced = true;       // custom rules: the resource is namespaced (or is `namespaces`)
  std::string namespaceName;
};

// Ok when the example and live sample of `scope` may be shown; otherwise the reason (shown in the
// rule's example instead of any object name, PromQL or value).
using SampleAuthorizer = std::function<core::Status(const SampleScope&)>;

struct ExplainOptions {
  std::string metric;         // only rules that produce, name or mention this metric ("" = all)
  std::string rule;           // only this rule path ("" = all)
  std::string namespaceName;  // namespace of the example object ("" = the first one with data)
  std::chrono::nanoseconds maxAge = std::chrono::minutes(10);  // discovery window
  size_t maxExamples = 3;
  bool liveSample = true;
  // How discovery asks the backend (as the relister does: --discovery-backend, replica labels).
  prom::DiscoveryOptions discovery;
  // Asked once the example's namespace is known, before any object name is looked up or a sample
  // query runs; null: everything may be shown (the CLI, whose user asks Prometheus directly).
  SampleAuthorizer authorizeSample;
};

struct DroppedNames {
  std::string reason;  // "filter", "unsafe_name", "no_resource_label", "unresolvable_resource"
  std::string filter;  // the filter's path (reason "filter")
  std::string detail;  // what the filter or resource mapping says, for humans
  size_t count = 0;
  std::vector<std::string> examples;
};

struct ProducedMetric {
  std::string metric;
  std::string seriesName;              // the series whose name it is (.Series; last one wins)
  std::vector<std::string> resources;  // custom: "pods", "namespaces (cluster-scoped)"
};

struct ExampleQuery {
  std::string metric;
  std::string object;  // "pods default/triton-0", "namespace default", "" (external, no namespace)
  std::string promql;  // empty when it could not be rendered
  std::string error;
};

struct LiveSample {
  struct Value {
    std::string labels;  // {pod="triton-0"}
    double value = 0;
    std::chrono::system_clock::time_point at;
  };
  std::vector<Value> values;  // the first few
  size_t total = 0;           // samples in the result
  std::string error;          // the query's error, if any
};

struct RuleExplanation {
  std::string path;
  std::string kind;     // "custom" or "external"
  std::string backend;  // the backend the rule names ("default" when none)
  std::string seriesQuery;
  std::string metricsQuery;
  std::string discoveryError;  // this explanation's discovery call failed
  size_t names = 0;            // metric names the seriesQuery matched
  size_t kept = 0;             // names that produced a metric
  std::vector<DroppedNames> dropped;
  std::vector<ProducedMetric> metrics;
  std::optional<ExampleQuery> example;
  std::optional<LiveSample> sample;
  std::optional<RuleState> recorded;  // the adapter's own record (endpoint only)
  bool relevant = true;               // false when --metric is given and the rule has no part in it
};

struct Explanation {
  std::string file;
  std::string metric;  // the --metric filter, if any
  std::chrono::system_clock::time_point at;
  std::vector<RuleExplanation> rules;
};

// The discovery part for one rule, from what its seriesQuery returned (metric name → label names).
RuleExplanation explainDiscovery(const rules::CompiledRule& rule,
                                 const prom::MetricLabelNames& names,
                                 const ExplainOptions& options);

// The client to ask for a backend's data, by the name rules use (rules::kDefaultBackend for the
// flags' server); null when no such backend is configured (the rule's explanation then carries a
// discovery error naming it).
using BackendClients = std::function<prom::Client*(std::string_view backend)>;

// The uncached (discovery) client of every backend of `backends` (kept alive by the function).
BackendClients discoveryClientsOf(std::shared_ptr<const BackendSet> backends);

// Everything above, asking each rule's backend through `clients` (discovery per distinct
// (backend, seriesQuery), label values for the example object, the live sample). `status` may be
// null (the CLI has no history).
Explanation explain(const rules::RuleSet& rules, const BackendClients& clients,
                    const ExplainOptions& options, const RuleStatus* status = nullptr);
// The same with one client for every backend (tests with one fake server).
Explanation explain(const rules::RuleSet& rules, prom::Client& client,
                    const ExplainOptions& options, const RuleStatus* status = nullptr);

// Renderings: text for people ("why is my metric not there"), JSON for tools.
std::string explanationText(const Explanation& explanation);
std::string explanationJson(const Explanation& explanation);

}  // namespace gpuscale::adapter
