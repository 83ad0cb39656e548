// Relister: keeps the registries the providers serve from up to date (prometheus-adapter's relist
// loops, one thread for custom and external rules).
//
// Every `interval` (sliding: measured from the end of the previous run; the first run starts at
// once unless start() says otherwise) it discovers, for each distinct (backend, seriesQuery) of
// the custom and external rules, asked of that backend (backend.h), the metric
// names and their label names within [now - maxAge, now] with the label APIs (prom/discovery.h:
// cost independent of the series count; /api/v1/series only as a fallback), builds the registries
// (rules/registry.h) and swaps in a new immutable DiscoverySnapshot. When a seriesQuery fails, the
// registry of the rule kind that uses it keeps its last good version (the other kind is still
// refreshed); the failure is logged once per change of state (failing, recovered, different error)
// and counted. Readiness is "the first discovery finished" (both kinds built at least once).
//
// `/metrics` families (registered on the given registry):
//   gpuscale_adapter_relist_duration_seconds                      histogram
//   gpuscale_adapter_relists_total{result="success"|"failure"}     counter
//   gpuscale_adapter_last_relist_success_timestamp_seconds         gauge
//   gpuscale_adapter_registry_metrics{api="custom"|"external"}     gauge (served metrics)
//   gpuscale_adapter_discovered_metric_names{api}                  gauge (metric names seen)
//   gpuscale_adapter_rule_series{rule}                             gauge (metric names the rule's
//                                                                         seriesQuery returned)
//   gpuscale_adapter_rule_entries{rule}                            gauge (metrics the rule serves)
//   gpuscale_adapter_rule_last_error{rule}                         gauge (1 when the rule's last
//                                                                         discovery failed)
// and, when a RuleStatus is given, each rule's discovery outcome (rule_status.h).
// Series of rules and metrics that are gone do not linger: after each run of the background
// thread, removeStaleSeries() removes the per-rule series of rules that are not in this relister's
// rule set (a reload removed them) and, from the RuleStatus, the rules and (rule, metric) pairs
// its snapshot does not serve.
//
// Thread safety: snapshot(), ready() and lastError() from any thread; start()/stop() from one
// controlling thread. relistOnce() must not run concurrently with the background thread (tests use
// it without start()).
#pragma once

#include <prometheus/registry.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "gpuscale/adapter/backend.h"
#include "gpuscale/adapter/rule_status.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/core/status.h"
#include "gpuscale/prom/client.h"
#include "gpuscale/prom/discovery.h"
#include "gpuscale/rules/registry.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter {

// What the providers serve from: both registries of one point in time. Never null registries.
struct DiscoverySnapshot {
  std::shared_ptr<const rules::CustomRegistry> custom;
  std::shared_ptr<const rules::ExternalRegistry> external;
  // The backends the rules of these registries query; null when the relister was given a single
  // client (the providers then query through their QueryRunner's client).
  std::shared_ptr<const BackendSet> backends;

  // The backend `rule` queries, or null (see `backends`).
  const Backend* backendFor(const rules::CompiledRule& rule) const {
    return backends ? backends->find(rule.backend()) : nullptr;
  }
};

struct RelistOptions {
  core::Duration interval = std::chrono::minutes(10);
  // Window of discovery; 0 means `interval`.
  core::Duration maxAge = core::Duration::zero();
  prom::DiscoveryOptions discovery;
};

// Checks the interval/max-age combination as prometheus-adapter does at start: max age shorter than
// the relist interval is an error when there are custom rules. Returns the effective options.
core::Result<RelistOptions> resolveRelistOptions(RelistOptions options,
                                                 const rules::RuleSet& rules);

class Relister {
 public:
  // Every rule is discovered through `client` (whatever backend it names); snapshots carry no
  // backends.
  Relister(std::shared_ptr<const rules::RuleSet> rules, std::shared_ptr<prom::Client> client,
           RelistOptions options, std::shared_ptr<prometheus::Registry> registry,
           std::shared_ptr<RuleStatus> status = nullptr);
  // Each rule is discovered through its backend's discovery client; snapshots carry `backends`
  // (which must hold every backend the rules name). `status` may be null (no per-rule status).
  Relister(std::shared_ptr<const rules::RuleSet> rules, std::shared_ptr<const BackendSet> backends,
           RelistOptions options, std::shared_ptr<prometheus::Registry> registry,
           std::shared_ptr<RuleStatus> status = nullptr);
  ~Relister();
  Relister(const Relister&) = delete;
  Relister& operator=(const Relister&) = delete;

  // Starts the background thread: the first run at once, or after one interval when
  // `firstRunDone` (the caller ran relistOnce() itself).
  void start(bool firstRunDone = false);
  // Stops it; waits for a run in progress (bounded by the Prometheus client's timeout).
  void stop();

  // One discovery run; OK when every seriesQuery succeeded.
  core::Status relistOnce();

  // Removes from /metrics the per-rule series of rules this relister does not have, and from the
  // RuleStatus (if any) every rule it does not have and every (rule, metric) pair its snapshot
  // does not serve. Meant for the relister of the serving generation (the background thread calls
  // it after each run; ConfigReloader after a reload). Thread-safe: a relister of another
  // generation may run meanwhile (what it writes afterwards for its own rules reappears until the
  // serving relister's next run).
  void removeStaleSeries();

  // The current registries: empty ones until the first discovery finished.
  std::shared_ptr<const DiscoverySnapshot> snapshot() const;
  bool ready() const { return ready_.load(); }
  // The error of the last run (OK when it succeeded).
  core::Status lastError() const;

  struct Metrics;

 private:
  void loop(bool firstRunDone);

  std::shared_ptr<const rules::RuleSet> rules_;
  std::shared_ptr<const BackendSet> backends_;  // for discovery
  std::shared_ptr<prom::Client> client_;        // for discovery when backends_ is null
  RelistOptions options_;
  std::unique_ptr<Metrics> metrics_;
  std::shared_ptr<RuleStatus> status_;

  mutable std::mutex mutex_;  // guards snapshot_, lastError_, stopping_
  std::shared_ptr<const DiscoverySnapshot> snapshot_;
  core::Status lastError_;
  bool builtCustom_ = false;
  bool builtExternal_ = false;
  std::atomic<bool> ready_{false};
  bool stopping_ = false;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace gpuscale::adapter
