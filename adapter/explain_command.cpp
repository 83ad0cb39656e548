#include "explain_command.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <ostream>
#include <string>
#include <vector>

#include "gpuscale/adapter/backend.h"
#include "gpuscale/adapter/explain.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/subcommands.h"
#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/prom/http_client.h"
#include "gpuscale/prom/partial_response.h"
#include "gpuscale/rules/loader.h"

namespace gpuscale::adapter {
namespace {

struct ExplainFlags {
  std::string config;
  std::string output = "text";
  bool noSample = false;
  prom::DiscoveryBackend backend = prom::DiscoveryBackend::kPrometheus;
  ExplainOptions options;
  prom::PrometheusOptions prometheus;
};

core::FlagSet explainFlagSet(ExplainFlags& flags) {
  core::FlagSet set(
      "gpuscale-adapter explain",
      "gpuscale-adapter explain --config FILE --prometheus-url URL [flags]",
      "Shows per rule the series query, the metric names it matched, which were dropped by which "
      "filter, the metrics and resources produced, an example PromQL with a live sample, and the "
      "errors met. The Prometheus flags describe the default backend, as for serve; a rule naming "
      "another backend (backends: in the file) is explained against that one.");
  set.section("Explain flags");
  set.addString("config", &flags.config, "rule file (required)");
  set.addString("metric", &flags.options.metric,
                "only the rules that produce, name or mention this metric");
  set.addString("namespace", &flags.options.namespaceName,
                "namespace of the example object (default: the first one with data)");
  set.addString("rule", &flags.options.rule, "only this rule (its path, e.g. rules[0])");
  set.addDuration("metrics-max-age", &flags.options.maxAge, "discovery window",
                  core::DurationBound::kPositive);
  prom::addDiscoveryFlags(set, &flags.backend, &flags.options.discovery);
  set.addBool("no-sample", &flags.noSample, "do not run the example query");
  set.addChoice("output", &flags.output, "text or json",
                {{"text", std::string("text")}, {"json", std::string("json")}})
      .shorthand('o')
      .alias("o");
  set.section("Prometheus flags", "The backend named \"default\", as for serve.");
  flags.prometheus.addFlags(set);
  return set;
}

int runExplain(ExplainFlags& flags, const core::FlagSet& set, std::ostream& out,
               std::ostream& err) {
  if (flags.config.empty()) return set.usageError(err, "--config is required");
  if (auto valid = flags.prometheus.validate(); !valid.ok()) {
    return set.usageError(err, valid.message());
  }
  spdlog::set_level(spdlog::level::warn);
  flags.options.liveSample = !flags.noSample;
  prom::PrometheusOptions& prometheus = flags.prometheus;
  // As serve does: explain should see what the adapter sees.
  if (std::string warning = prom::turnOffThanosPartialResponse(prometheus, flags.backend);
      !warning.empty()) {
    err << "gpuscale-adapter explain: " << warning << "\n";
  }

  auto ruleSet = rules::loadRules(flags.config, k8s::BuiltinResourceTable::instance());
  if (!ruleSet) {
    err << ruleSet.status().message() << "\n";
    return core::kExitError;
  }
  // Each rule is explained against its own backend: the flags' server, or one the file declares
  // (its URL, headers and credentials, as serve builds them). No cache, no /metrics.
  const BackendFactory plain =
      [](const std::string& name,
         const prom::PrometheusOptions& options) -> core::Result<std::shared_ptr<const Backend>> {
    auto http = prom::HttpClient::create(options);
    if (!http) return http.status();
    std::shared_ptr<prom::Client> client(std::move(*http));
    return std::make_shared<const Backend>(name, client, client, nullptr);
  };
  auto fallback = plain(std::string(rules::kDefaultBackend), prometheus);
  if (!fallback) {
    err << "gpuscale-adapter explain: " << fallback.status().message() << "\n";
    return core::kExitError;
  }
  auto backends = buildBackends(**ruleSet, std::move(*fallback), prometheus, plain);
  if (!backends) {
    err << "gpuscale-adapter explain: " << backends.status().message() << "\n";
    return core::kExitError;
  }
  Explanation explanation =
      explain(**ruleSet, discoveryClientsOf(std::move(*backends)), flags.options);
  out << (flags.output == "json" ? explanationJson(explanation) : explanationText(explanation));
  return core::kExitOk;
}

}  // namespace

core::CommandHandler explainCommand() { return core::flagCommand(explainFlagSet, runExplain); }

}  // namespace gpuscale::adapter
