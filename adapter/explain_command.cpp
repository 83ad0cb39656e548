#include "explain_command.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <ostream>
#include <string>
#include <vector>

#include "gpuscale/adapter/backend.h"
#include "gpuscale/adapter/explain.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/prom/http_client.h"
#include "gpuscale/prom/partial_response.h"
#include "gpuscale/rules/loader.h"

namespace gpuscale::adapter {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 2;

constexpr std::string_view kUsage =
    "usage: gpuscale-adapter explain --config FILE --prometheus-url URL [--metric M]\n"
    "                                [--namespace NS] [--rule PATH] [--metrics-max-age D]\n"
    "                                [--no-sample] [-o text|json] [--prometheus-* flags]\n"
    "                                [--discovery-backend B] [--thanos-replica-label L]\n"
    "\n"
    "Shows per rule the series query, the metric names it matched, which were dropped by which\n"
    "filter, the metrics and resources produced, an example PromQL with a live sample, and the\n"
    "errors met. The --prometheus-* flags are those of serve (see 'gpuscale-adapter serve "
    "--help')\n"
    "and describe the default backend; a rule naming another backend (backends: in the file) is\n"
    "explained against that one.\n";

struct ExplainFlags {
  std::string config;
  std::string output = "text";
  prom::DiscoveryBackend backend = prom::DiscoveryBackend::kPrometheus;
  ExplainOptions options;
};

int usageError(std::ostream& err, std::string_view message) {
  err << "gpuscale-adapter explain: " << message << "\n" << kUsage;
  return kExitError;
}

// Applies one of explain's own flags; false for an unknown one.
core::Result<bool> applyFlag(ExplainFlags& flags, std::string_view name, const std::string& value) {
  if (name == "config") {
    flags.config = value;
  } else if (name == "metric") {
    flags.options.metric = value;
  } else if (name == "namespace") {
    flags.options.namespaceName = value;
  } else if (name == "rule") {
    flags.options.rule = value;
  } else if (name == "o" || name == "output") {
    if (value != "text" && value != "json") {
      return core::Status::badRequest("-o must be text or json, not " + value);
    }
    flags.output = value;
  } else if (name == "metrics-max-age") {
    auto age = core::parseGoDuration(value);
    if (!age || *age <= core::Duration::zero()) {
      return core::Status::badRequest("--metrics-max-age must be a positive duration");
    }
    flags.options.maxAge = *age;
  } else if (name == "discovery-backend") {
    auto backend = prom::parseDiscoveryBackend(value);
    if (!backend) return backend.status();
    auto replicaLabels = std::move(flags.options.discovery.replicaLabels);
    flags.options.discovery = prom::discoveryOptionsFor(*backend);
    flags.options.discovery.replicaLabels = std::move(replicaLabels);
    flags.backend = *backend;
  } else if (name == "thanos-replica-label") {
    auto added = prom::appendReplicaLabels(value, flags.options.discovery.replicaLabels);
    if (!added.ok()) return core::Status::badRequest("--thanos-replica-label: " + added.message());
  } else {
    return false;
  }
  return true;
}

core::Result<ExplainFlags> parseFlags(const std::vector<std::string>& rest) {
  ExplainFlags flags;
  for (size_t i = 0; i < rest.size(); ++i) {
    std::string_view arg = rest[i];
    const size_t dashes = arg.starts_with("--") ? 2 : (arg.starts_with("-") ? 1 : 0);
    if (dashes == 0) return core::Status::badRequest(fmt::format("unexpected argument {:?}", arg));
    std::string_view body = arg.substr(dashes);
    if (body == "no-sample") {
      flags.options.liveSample = false;
      continue;
    }
    const size_t eq = body.find('=');
    std::string_view name = body.substr(0, eq);
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (i + 1 < rest.size()) {
      value = rest[++i];
    } else {
      return core::Status::badRequest(fmt::format("flag {} needs a value", arg));
    }
    auto applied = applyFlag(flags, name, value);
    if (!applied) return applied.status();
    if (!*applied) return core::Status::badRequest(fmt::format("unknown flag {}", arg));
  }
  if (flags.config.empty()) return core::Status::badRequest("--config is required");
  return flags;
}

}  // namespace

int runExplainCommand(std::span<const std::string_view> args, std::ostream& out,
                      std::ostream& err) {
  for (std::string_view arg : args) {
    if (arg == "-h" || arg == "--help") {
      out << kUsage;
      return kExitOk;
    }
  }
  spdlog::set_level(spdlog::level::warn);
  std::vector<std::string> rest;
  auto prometheus =
      prom::parsePrometheusFlags(std::vector<std::string>(args.begin(), args.end()), &rest);
  if (!prometheus) return usageError(err, prometheus.status().message());
  if (auto valid = prom::validate(*prometheus); !valid.ok()) {
    return usageError(err, valid.message());
  }
  auto flags = parseFlags(rest);
  if (!flags) return usageError(err, flags.status().message());
  // As serve does: explain should see what the adapter sees.
  if (std::string warning = prom::turnOffThanosPartialResponse(*prometheus, flags->backend);
      !warning.empty()) {
    err << "gpuscale-adapter explain: " << warning << "\n";
  }

  auto ruleSet = rules::loadRules(flags->config, k8s::BuiltinResourceTable::instance());
  if (!ruleSet) {
    err << ruleSet.status().message() << "\n";
    return kExitError;
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
  auto fallback = plain(std::string(rules::kDefaultBackend), *prometheus);
  if (!fallback) {
    err << "gpuscale-adapter explain: " << fallback.status().message() << "\n";
    return kExitError;
  }
  auto backends = buildBackends(**ruleSet, std::move(*fallback), *prometheus, plain);
  if (!backends) {
    err << "gpuscale-adapter explain: " << backends.status().message() << "\n";
    return kExitError;
  }
  Explanation explanation =
      explain(**ruleSet, discoveryClientsOf(std::move(*backends)), flags->options);
  out << (flags->output == "json" ? explanationJson(explanation) : explanationText(explanation));
  return kExitOk;
}

}  // namespace gpuscale::adapter
