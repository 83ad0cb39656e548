#include "gpuscale/adapter/relister.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "metric_children.h"

#include "gpuscale/core/metric_families.h"

namespace gpuscale::adapter {
namespace {

using WallClock = std::chrono::system_clock;

// Every query of `rules` mapped to no series: what registries are built from before discovery.
rules::SeriesByQuery emptySeries(const rules::RuleSet& rules) {
  rules::SeriesByQuery out;
  for (rules::RuleKind kind : {rules::RuleKind::kCustom, rules::RuleKind::kExternal}) {
    for (const auto& query : rules.discoveryQueries(kind)) out[query.key];
  }
  return out;
}

// What discovery must find for `query` of `backend`: the override labels of its custom rules, or
// every label name (nullopt) when one of them maps labels by a template. External rules need names
// only.
std::optional<std::vector<std::string>> labelsNeeded(const rules::RuleSet& rules,
                                                     std::string_view backend,
                                                     std::string_view query) {
  std::set<std::string> labels;
  for (const rules::CompiledRule& rule : rules.of(rules::RuleKind::kCustom)) {
    if (rule.seriesQuery() != query || rule.backend() != backend) continue;
    if (rule.resources().hasTemplate()) return std::nullopt;
    for (const auto& [label, resource] : rule.resources().overrides()) labels.insert(label);
  }
  return std::vector<std::string>(labels.begin(), labels.end());
}

}  // namespace

struct Relister::Metrics {
  prometheus::Histogram* duration = nullptr;
  prometheus::Counter* successes = nullptr;
  prometheus::Counter* failures = nullptr;
  prometheus::Gauge* lastSuccess = nullptr;
  std::map<std::string, prometheus::Gauge*> registryMetrics;  // api -> gauge
  std::map<std::string, prometheus::Gauge*> metricNames;      // api -> gauge
  // Per-rule families: children are looked up per write (under ruleSeriesMutex()), never cached,
  // so that removeStaleSeries() of the serving generation may remove those of rules that are gone
  // while another generation's relister (a reload's candidate) still writes.
  prometheus::Family<prometheus::Gauge>* series = nullptr;
  prometheus::Family<prometheus::Gauge>* entries = nullptr;
  prometheus::Family<prometheus::Gauge>* errors = nullptr;

  explicit Metrics(prometheus::Registry& registry) {
    duration = &core::histogramFamily(registry, "gpuscale_adapter_relist_duration_seconds",
                                      "Duration of a discovery run (all series queries)")
                    .Add({}, prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05, 0.1,
                                                                     0.25, 0.5, 1, 2.5, 5, 10, 30});
    auto& runs =
        core::counterFamily(registry, "gpuscale_adapter_relists_total", "Discovery runs by result");
    successes = &runs.Add({{"result", "success"}});
    failures = &runs.Add({{"result", "failure"}});
    lastSuccess = &core::gauge(registry, "gpuscale_adapter_last_relist_success_timestamp_seconds",
                               "When a discovery run last succeeded (Unix time)");
    auto& served = core::gaugeFamily(registry, "gpuscale_adapter_registry_metrics",
                                     "Metrics in the served registry");
    auto& names =
        core::gaugeFamily(registry, "gpuscale_adapter_discovered_metric_names",
                          "Prometheus metric names the series queries returned in the last run");
    for (std::string api : {"custom", "external"}) {
      registryMetrics[api] = &served.Add({{"api", api}});
      metricNames[api] = &names.Add({{"api", api}});
    }
    series =
        &core::gaugeFamily(registry, "gpuscale_adapter_rule_series",
                           "Metric names the rule's seriesQuery returned in its last discovery");
    entries =
        &core::gaugeFamily(registry, "gpuscale_adapter_rule_entries", "Metrics the rule serves");
    errors = &core::gaugeFamily(registry, "gpuscale_adapter_rule_last_error",
                                "1 when the rule's last discovery failed");
  }

  static void set(prometheus::Family<prometheus::Gauge>& family, const std::string& rule,
                  double value) {
    std::lock_guard lock(ruleSeriesMutex());
    family.Add({{"rule", rule}}).Set(value);
  }

  // Creates the series of every rule that has none (0) so they are visible before the first
  // discovery; one that exists (the serving generation's) keeps its value.
  void addRules(const rules::RuleSet& ruleSet) {
    std::lock_guard lock(ruleSeriesMutex());
    for (rules::RuleKind kind : {rules::RuleKind::kCustom, rules::RuleKind::kExternal}) {
      for (const rules::CompiledRule& rule : ruleSet.of(kind)) {
        for (auto* family : {series, entries, errors}) family->Add({{"rule", rule.path()}});
      }
    }
  }

  void ruleStats(const std::vector<rules::RuleStats>& stats) {
    for (const rules::RuleStats& s : stats) {
      set(*series, s.path, static_cast<double>(s.series));
      set(*entries, s.path, static_cast<double>(s.entries));
    }
  }

  // Removes the series of rules not in `live`.
  void retainRules(const std::set<std::string>& live) {
    std::lock_guard lock(ruleSeriesMutex());
    for (auto* family : {series, entries, errors}) {
      removeChildrenWhere(*family, [&](const prometheus::Labels& labels) {
        auto it = labels.find("rule");
        return it != labels.end() && !live.contains(it->second);
      });
    }
  }

  // One mutex for every relister of the process: writes and removals of per-rule children.
  static std::mutex& ruleSeriesMutex() {
    static std::mutex mutex;
    return mutex;
  }
};

core::Result<RelistOptions> resolveRelistOptions(RelistOptions options,
                                                 const rules::RuleSet& rules) {
  if (options.interval <= core::Duration::zero()) {
    return core::Status::badRequest("--metrics-relist-interval must be positive");
  }
  if (options.maxAge == core::Duration::zero()) options.maxAge = options.interval;
  if (options.maxAge < options.interval && !rules.rules.empty()) {
    return core::Status::badRequest("max age must not be less than relist interval");
  }
  return options;
}

Relister::Relister(std::shared_ptr<const rules::RuleSet> rules,
                   std::shared_ptr<prom::Client> client, RelistOptions options,
                   std::shared_ptr<prometheus::Registry> registry,
                   std::shared_ptr<RuleStatus> status)
    : Relister(std::move(rules), std::shared_ptr<const BackendSet>(), options, std::move(registry),
               std::move(status)) {
  client_ = std::move(client);
}

Relister::Relister(std::shared_ptr<const rules::RuleSet> rules,
                   std::shared_ptr<const BackendSet> backends, RelistOptions options,
                   std::shared_ptr<prometheus::Registry> registry,
                   std::shared_ptr<RuleStatus> status)
    : rules_(std::move(rules)),
      backends_(std::move(backends)),
      options_(options),
      status_(std::move(status)) {
  if (options_.maxAge == core::Duration::zero()) options_.maxAge = options_.interval;
  if (registry) {
    metrics_ = std::make_unique<Metrics>(*registry);
    metrics_->addRules(*rules_);
  }
  rules::SeriesByQuery none = emptySeries(*rules_);
  auto snapshot = std::make_shared<DiscoverySnapshot>();
  // Building from no series cannot fail: every query is a key.
  snapshot->custom = *rules::CustomRegistry::build(rules_, none);
  snapshot->external = *rules::ExternalRegistry::build(rules_, none);
  snapshot->backends = backends_;
  snapshot_ = std::move(snapshot);
}

Relister::~Relister() { stop(); }

void Relister::start(bool firstRunDone) {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this, firstRunDone] { loop(firstRunDone); });
}

void Relister::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Relister::loop(bool firstRunDone) {
  for (bool run = !firstRunDone;; run = true) {
    if (run) {
      (void)relistOnce();  // a failure is kept as lastError() and logged when it changes
      removeStaleSeries();
    }
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, options_.interval, [this] { return stopping_; })) return;
  }
}

std::shared_ptr<const DiscoverySnapshot> Relister::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

core::Status Relister::lastError() const {
  std::lock_guard lock(mutex_);
  return lastError_;
}

void Relister::removeStaleSeries() {
  std::set<std::string> paths;
  for (rules::RuleKind kind : {rules::RuleKind::kCustom, rules::RuleKind::kExternal}) {
    for (const rules::CompiledRule& rule : rules_->of(kind)) paths.insert(rule.path());
  }
  if (metrics_) metrics_->retainRules(paths);
  if (!status_) return;
  std::shared_ptr<const DiscoverySnapshot> served = snapshot();
  std::set<std::pair<std::string, std::string>> metrics;
  for (const rules::CustomEntry& entry : served->custom->entries()) {
    metrics.emplace(entry.rule->path(), entry.info.metric);
  }
  for (const rules::ExternalEntry& entry : served->external->entries()) {
    metrics.emplace(entry.rule->path(), entry.metric);
  }
  status_->retain(paths, metrics);
}

core::Status Relister::relistOnce() {
  const auto started = std::chrono::steady_clock::now();
  const WallClock::time_point now = WallClock::now();
  prom::TimeRange window{now - std::chrono::duration_cast<WallClock::duration>(options_.maxAge),
                         std::nullopt};

  // Every distinct seriesQuery once, whichever kinds use it.
  rules::SeriesByQuery series;
  std::map<std::string, core::Status, std::less<>> failed;
  std::set<std::string, std::less<>> names[2];
  for (rules::RuleKind kind : {rules::RuleKind::kCustom, rules::RuleKind::kExternal}) {
    for (const auto& [key, backendName, query] : rules_->discoveryQueries(kind)) {
      if (!series.contains(key) && !failed.contains(key)) {
        const Backend* backend = backends_ ? backends_->find(backendName) : nullptr;
        auto found = backend != nullptr || client_
                         ? prom::discoverMetrics(backend ? backend->discovery() : *client_, query,
                                                 labelsNeeded(*rules_, backendName, query), window,
                                                 options_.discovery)
                         : core::Result<prom::MetricLabelNames>(core::Status::internal(
                               "backend " + backendName + " is not configured"));
        if (!found) {
          failed.emplace(key, found.status());
          continue;
        }
        auto& list = series[key];
        for (auto& [name, labels] : *found) list.push_back(rules::Series{name, labels, 1});
      }
      if (auto it = series.find(key); it != series.end()) {
        for (const rules::Series& s : it->second) names[static_cast<int>(kind)].insert(s.name);
      }
    }
  }
  auto kindFailed = [&](rules::RuleKind kind) -> core::Status {
    for (const auto& query : rules_->discoveryQueries(kind)) {
      if (auto it = failed.find(query.key); it != failed.end()) {
        std::string where = query.backend == rules::kDefaultBackend
                                ? std::string()
                                : " of backend " + query.backend;
        return it->second.withContext("unable to fetch metrics for query \"" + query.seriesQuery +
                                      "\"" + where);
      }
    }
    return core::Status();
  };

  core::Status customError = kindFailed(rules::RuleKind::kCustom);
  core::Status externalError = kindFailed(rules::RuleKind::kExternal);
  std::shared_ptr<const rules::CustomRegistry> custom;
  std::shared_ptr<const rules::ExternalRegistry> external;
  if (customError.ok()) {
    auto built = rules::CustomRegistry::build(rules_, series);
    if (built)
      custom = std::move(*built);
    else
      customError = built.status();
  }
  if (externalError.ok()) {
    auto built = rules::ExternalRegistry::build(rules_, series);
    if (built)
      external = std::move(*built);
    else
      externalError = built.status();
  }
  core::Status error = customError.ok() ? externalError : customError;

  core::Status previous;
  {
    std::lock_guard lock(mutex_);
    auto next = std::make_shared<DiscoverySnapshot>(*snapshot_);
    if (custom) {
      next->custom = custom;
      builtCustom_ = true;
    }
    if (external) {
      next->external = external;
      builtExternal_ = true;
    }
    snapshot_ = next;
    previous = lastError_;
    lastError_ = error;
    if (builtCustom_ && builtExternal_) ready_.store(true);
  }

  if (!error.ok() && error.message() != previous.message()) {
    spdlog::warn("unable to update list of all metrics (keeping the last good one): {}",
                 error.message());
  } else if (error.ok() && !previous.ok()) {
    spdlog::info("metric discovery recovered");
  }
  spdlog::debug("discovery: {} custom, {} external metrics", custom ? custom->entries().size() : 0,
                external ? external->entries().size() : 0);

  if (status_) {
    for (rules::RuleKind kind : {rules::RuleKind::kCustom, rules::RuleKind::kExternal}) {
      const bool built = kind == rules::RuleKind::kCustom ? custom != nullptr : external != nullptr;
      for (const rules::CompiledRule& rule : rules_->of(kind)) {
        if (auto it = failed.find(rule.seriesQuery()); it != failed.end()) {
          status_->discoveryFailed(rule.path(), it->second, now);
        } else if (built) {
          status_->discoverySucceeded(rule.path(), now);
        }
      }
    }
  }
  if (metrics_) {
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
    metrics_->duration->Observe(elapsed.count());
    (error.ok() ? metrics_->successes : metrics_->failures)->Increment();
    if (error.ok()) metrics_->lastSuccess->Set(core::unixSeconds(now));
    if (custom) {
      metrics_->ruleStats(custom->ruleStats());
      metrics_->registryMetrics["custom"]->Set(static_cast<double>(custom->entries().size()));
      metrics_->metricNames["custom"]->Set(static_cast<double>(names[0].size()));
    }
    if (external) {
      metrics_->ruleStats(external->ruleStats());
      metrics_->registryMetrics["external"]->Set(static_cast<double>(external->entries().size()));
      metrics_->metricNames["external"]->Set(static_cast<double>(names[1].size()));
    }
    for (rules::RuleKind kind : {rules::RuleKind::kCustom, rules::RuleKind::kExternal}) {
      for (const rules::CompiledRule& rule : rules_->of(kind)) {
        Metrics::set(*metrics_->errors, rule.path(), failed.contains(rule.discoveryKey()) ? 1 : 0);
      }
    }
  }
  return error;
}

}  // namespace gpuscale::adapter
