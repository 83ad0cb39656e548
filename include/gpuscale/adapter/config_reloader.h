// ConfigReloader: the rule file, the backends it declares and the relister that discovers its
// metrics, as one generation that a reload replaces as a whole.
//
// create() loads the file (an error is the file's `FILE:LINE:COL: PATH: message`, for exit 2) and
// builds the first generation; start() starts its discovery and the watcher (config_watcher.h).
// On a change or SIGHUP, reload():
//  - loads and validates the file, builds the backends it declares (the default one, from the
//    flags, is built once by create() and kept) and a relister, and runs that relister's first
//    discovery on the watcher's thread;
//  - when all of that succeeded, swaps the new generation in (providers read snapshot() per
//    request: a request in flight finishes on the snapshot it took, with the old rules and
//    backends), stops the old relist loop and starts the new one;
//  - otherwise keeps serving the old generation and logs the error, which for an invalid file
//    names the file, line, column and the rule (`rules[3].name.matches`). A failed first discovery
//    is retried at the watcher's next poll.
// Either way the serving generation's Relister::removeStaleSeries() then drops the per-rule and
// per-metric series of rules and metrics it does not have (removed by the reload, or registered by
// a rejected candidate) from `/metrics`.
// Serving custom or external metrics at all is decided at start (the API groups the server
// registers); a reload that adds rules of a kind the server does not serve logs that a restart is
// needed.
//
// `/metrics` (on the settings' registry):
//   gpuscale_config_last_reload_successful                 gauge, 1 or 0 (1 after the start)
//   gpuscale_config_last_reload_success_timestamp_seconds  gauge (Unix time; the start counts)
//   gpuscale_config_reloads_total{result="success"|"failure"}  counter
//
// A reload is also how rules follow the cluster's API discovery (resource_discovery.h): compiled
// rules resolve resources when they are compiled, so a change of what the mapper knows calls
// reload(), with `compile.unknownOverridesWarn` so an override naming a CRD not installed yet
// waits for it instead of failing the file.
//
// Thread safety: snapshot(), rules(), ready() from any thread; start()/stop() from one controlling
// thread; reload() from any thread (calls are serialised: the watcher's and discovery's).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "gpuscale/adapter/backend.h"
#include "gpuscale/adapter/config_watcher.h"
#include "gpuscale/adapter/relister.h"
#include "gpuscale/core/result.h"
#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/prom/options.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter {

struct ReloadSettings {
  std::string configFile;
  // Must outlive the reloader (compiled rules point to it).
  const k8s::ResourceMapper* mapper = &k8s::BuiltinResourceTable::instance();
  rules::CompileOptions compile;
  prom::PrometheusOptions prometheus;  // the default backend
  RelistOptions relist;                // as given; checked against every generation's rules
  std::shared_ptr<prometheus::Registry> registry;  // not null
  std::shared_ptr<RuleStatus> status;              // per-rule status; may be null
  ConfigWatcherOptions watch;
  // Makes the backends; empty means real ones (httpBackends(registry)).
  BackendFactory makeBackend;
  // Which files declared backends may name (credential_file_policy.h); null: not limited.
  std::shared_ptr<const CredentialFilePolicy> credentialFiles;
};

class ConfigReloader {
 public:
  static core::Result<std::shared_ptr<ConfigReloader>> create(ReloadSettings settings);
  ~ConfigReloader();
  ConfigReloader(const ConfigReloader&) = delete;
  ConfigReloader& operator=(const ConfigReloader&) = delete;

  // The backend the --prometheus-* flags describe (the same in every generation).
  const std::shared_ptr<const Backend>& defaultBackend() const { return defaultBackend_; }
  // The current generation's registries (and backends).
  std::shared_ptr<const DiscoverySnapshot> snapshot() const;
  std::shared_ptr<const rules::RuleSet> rules() const;
  // The current generation's rules and the backends they query, taken together (a reload swaps
  // both at once).
  std::pair<std::shared_ptr<const rules::RuleSet>, std::shared_ptr<const BackendSet>>
  rulesAndBackends() const;
  // The current generation's relist options (interval, max age).
  RelistOptions relistOptions() const;
  // The current generation finished a discovery (a reloaded one always has).
  bool ready() const;

  // Starts the first generation's discovery and the watcher.
  void start();
  void stop();

  // Loads the file again (see the file comment). OK when the new generation serves.
  core::Status reload();

  struct Generation;

 private:
  explicit ConfigReloader(ReloadSettings settings);
  core::Result<std::shared_ptr<Generation>> build() const;
  void recordOutcome(bool success);

  ReloadSettings settings_;
  std::shared_ptr<const Backend> defaultBackend_;
  std::mutex reloadMutex_;    // serialises reload()
  mutable std::mutex mutex_;  // guards generation_
  std::shared_ptr<Generation> generation_;
  bool servesCustom_ = false;
  bool servesExternal_ = false;
  std::unique_ptr<ConfigWatcher> watcher_;
  prometheus::Gauge* lastSuccessful_ = nullptr;
  prometheus::Gauge* lastSuccessTime_ = nullptr;
  prometheus::Counter* successes_ = nullptr;
  prometheus::Counter* failures_ = nullptr;
};

}  // namespace gpuscale::adapter
