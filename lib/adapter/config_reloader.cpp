#include "gpuscale/adapter/config_reloader.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "gpuscale/core/metric_families.h"
#include "gpuscale/rules/loader.h"

namespace gpuscale::adapter {
namespace {

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

struct ConfigReloader::Generation {
  std::shared_ptr<const rules::RuleSet> rules;
  std::shared_ptr<const BackendSet> backends;
  RelistOptions relist;
  std::shared_ptr<Relister> relister;
  std::string source;  // the file's text this generation was built from
};

core::Result<std::shared_ptr<ConfigReloader>> ConfigReloader::create(ReloadSettings settings) {
  if (!settings.makeBackend) settings.makeBackend = httpBackends(settings.registry);
  std::shared_ptr<ConfigReloader> reloader(new ConfigReloader(std::move(settings)));
  auto fallback = reloader->settings_.makeBackend(std::string(rules::kDefaultBackend),
                                                  reloader->settings_.prometheus);
  if (!fallback) return fallback.status();
  reloader->defaultBackend_ = std::move(*fallback);
  auto first = reloader->build();
  if (!first) return first.status();
  reloader->generation_ = std::move(*first);
  reloader->servesCustom_ = !reloader->generation_->rules->rules.empty();
  reloader->servesExternal_ = !reloader->generation_->rules->externalRules.empty();
  reloader->recordOutcome(true);
  return reloader;
}

ConfigReloader::ConfigReloader(ReloadSettings settings) : settings_(std::move(settings)) {
  prometheus::Registry& registry = *settings_.registry;
  lastSuccessful_ = &core::gauge(registry, "gpuscale_config_last_reload_successful",
                                 "Whether the last load of the rule file succeeded (1) or not (0)");
  lastSuccessTime_ = &core::gauge(registry, "gpuscale_config_last_reload_success_timestamp_seconds",
                                  "When the rule file was last loaded successfully (Unix time)");
  auto& reloads = core::counterFamily(registry, "gpuscale_config_reloads_total",
                                      "Reloads of the rule file by result");
  successes_ = &reloads.Add({{"result", "success"}});
  failures_ = &reloads.Add({{"result", "failure"}});
}

ConfigReloader::~ConfigReloader() { stop(); }

core::Result<std::shared_ptr<ConfigReloader::Generation>> ConfigReloader::build() const {
  auto next = std::make_shared<Generation>();
  auto config = rules::loadRuleConfigFile(settings_.configFile);
  if (!config) return config.status();
  next->source = config->source;
  auto rules = rules::compileRules(*config, *settings_.mapper, settings_.compile);
  if (!rules) return rules.status();
  next->rules = std::move(*rules);
  for (const rules::Diagnostic& warning : next->rules->warnings) {
    spdlog::warn("{}", warning.format(next->rules->file));
  }
  auto relist = resolveRelistOptions(settings_.relist, *next->rules);
  if (!relist) return relist.status();
  next->relist = *relist;
  auto backends = buildBackends(*next->rules, defaultBackend_, settings_.prometheus,
                                settings_.makeBackend, settings_.credentialFiles.get());
  if (!backends) return backends.status();
  next->backends = std::move(*backends);
  next->relister = std::make_shared<Relister>(next->rules, next->backends, next->relist,
                                              settings_.registry, settings_.status);
  return next;
}

std::shared_ptr<const DiscoverySnapshot> ConfigReloader::snapshot() const {
  std::unique_lock lock(mutex_);
  std::shared_ptr<Generation> current = generation_;
  lock.unlock();
  return current->relister->snapshot();
}

std::shared_ptr<const rules::RuleSet> ConfigReloader::rules() const {
  std::lock_guard lock(mutex_);
  return generation_->rules;
}

std::pair<std::shared_ptr<const rules::RuleSet>, std::shared_ptr<const BackendSet>>
ConfigReloader::rulesAndBackends() const {
  std::lock_guard lock(mutex_);
  return {generation_->rules, generation_->backends};
}

RelistOptions ConfigReloader::relistOptions() const {
  std::lock_guard lock(mutex_);
  return generation_->relist;
}

bool ConfigReloader::ready() const {
  std::lock_guard lock(mutex_);
  return generation_->relister->ready();
}

void ConfigReloader::start() {
  std::shared_ptr<Generation> current;
  {
    std::lock_guard lock(mutex_);
    current = generation_;
  }
  current->relister->start();
  if (watcher_) return;
  watcher_ = std::make_unique<ConfigWatcher>(
      settings_.configFile, [this](ConfigWatcher::Trigger) { return reload().httpCode() != 503; },
      settings_.watch);
  watcher_->start(current->source);
}

void ConfigReloader::stop() {
  if (watcher_) watcher_->stop();
  std::shared_ptr<Generation> current;
  {
    std::lock_guard lock(mutex_);
    current = generation_;
  }
  if (current) current->relister->stop();
}

void ConfigReloader::recordOutcome(bool success) {
  lastSuccessful_->Set(success ? 1 : 0);
  if (success) lastSuccessTime_->Set(nowSeconds());
}

core::Status ConfigReloader::reload() {
  std::lock_guard serialised(reloadMutex_);
  auto next = build();
  core::Status outcome = next ? (*next)->relister->relistOnce() : next.status();
  if (!outcome.ok()) {
    if (next) {
      outcome = core::Status::unavailable("the first discovery with the new rules failed: " +
                                          outcome.message());
    }
    spdlog::error("rule file {} not reloaded, the previous rules keep serving: {}",
                  settings_.configFile, outcome.message());
    // The candidate registered series for its rules; the serving generation drops them.
    std::shared_ptr<Generation> current;
    {
      std::lock_guard lock(mutex_);
      current = generation_;
    }
    current->relister->removeStaleSeries();
    failures_->Increment();
    recordOutcome(false);
    return outcome;
  }
  const rules::RuleSet& rules = *(*next)->rules;
  if ((!rules.rules.empty() && !servesCustom_) ||
      (!rules.externalRules.empty() && !servesExternal_)) {
    spdlog::warn(
        "the reloaded rules add {} metrics, which this server did not serve at start: restart it "
        "to serve them",
        servesCustom_ ? "external" : "custom");
  }
  std::shared_ptr<Generation> previous;
  {
    std::lock_guard lock(mutex_);
    previous = std::move(generation_);
    generation_ = *next;
  }
  // The old relister stops before the new one runs again, then the series of rules and metrics
  // the new rules do not have leave /metrics.
  previous->relister->stop();
  (*next)->relister->start(true);
  (*next)->relister->removeStaleSeries();
  successes_->Increment();
  recordOutcome(true);
  spdlog::info("rule file {} reloaded: {} custom, {} external rules, {} backends",
               settings_.configFile, rules.rules.size(), rules.externalRules.size(),
               (*next)->backends->all().size());
  return core::Status();
}

}  // namespace gpuscale::adapter
