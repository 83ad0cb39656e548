#include "explain_command.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "gpu_mapping_flags.h"
#include "gpuscale/core/flag_args.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/status_predicates.h"
#include "gpuscale/kube/config.h"
#include "gpuscale/kube/rest_client.h"
#include "gpuscale/prom/http_client.h"
#include "gpuscale/prom/options.h"
#include "gpuscale/reconciler/controller.h"
#include "gpuscale/reconciler/dcgm_gpu_pod_mapping.h"
#include "gpuscale/reconciler/hpa_explain.h"
#include "plan_command.h"

namespace gpuscale::reconciler {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

constexpr const char* kUsage =
    "usage: gpuscale-reconciler explain [NAMESPACE/NAME | --hpa NAMESPACE/NAME]\n"
    "    [--from DUMP.json | --kubeconfig PATH] [--config POLICY.yaml]\n"
    "    [--operator-namespace gpu-operator] [--state-namespace default]\n"
    "    [--state-config-map gpuscale-reconciler-state] [--now RFC3339] [-o text|json]\n"
    "    [--gpu-mapping node|dcgm] [--prometheus-url URL and the other --prometheus-* flags]\n"
    "    [the --dcgm-* flags of run]\n"
    "\n"
    "  explain  why an HPA was (not) raised: the policy that manages it, whether it is held at\n"
    "           its partition ceiling, and per node and lever why the planner would or would not\n"
    "           add partitions (cooldown, policy cap, busy GPUs, limits, nodes in flight or\n"
    "           backing off, ...). Live it lists, read-only, what the controller watches plus its\n"
    "           state ConfigMap; --from reads a `kubectl get nodes,pods,hpa,deployments,\n"
    "           statefulsets,configmaps -A -o json` dump (\"-\" for stdin). Give it the policy\n"
    "           file the reconciler runs with (without --config: the built-in \"default\").\n"
    "           Without NAMESPACE/NAME it explains every HPA a policy manages.\n";

struct ExplainArgs {
  std::string hpa;
  std::string from;
  std::string kubeconfig;
  std::string config;
  std::string operatorNamespace = "gpu-operator";
  StateStoreOptions state;
  std::optional<partition::TimePoint> now;
  std::string output = "text";
  std::string gpuMapping = "node";
  DcgmMappingOptions dcgm;
  prom::PrometheusOptions prometheus;
};

int usage(std::ostream& err, const std::string& message) {
  err << "gpuscale-reconciler explain: " << message << "\n" << kUsage;
  return kExitUsage;
}

std::optional<ExplainArgs> parseArgs(const std::vector<std::string>& all, std::ostream& err) {
  ExplainArgs a;
  std::vector<std::string> args;
  auto prometheus = prom::parsePrometheusFlags(all, &args);
  if (!prometheus) {
    usage(err, prometheus.status().message());
    return std::nullopt;
  }
  a.prometheus = *prometheus;
  core::FlagCallbacks flags;
  flags.apply = [&](std::string_view name, std::string_view text) -> core::Result<bool> {
    const std::string value(text);
    bool ok = true;
    if (name == "hpa") {
      a.hpa = value;
    } else if (name == "from") {
      a.from = value;
    } else if (name == "kubeconfig") {
      a.kubeconfig = value;
    } else if (name == "config" || name == "policy") {
      a.config = value;
    } else if (name == "operator-namespace") {
      a.operatorNamespace = value;
    } else if (name == "state-namespace") {
      a.state.ns = value;
    } else if (name == "state-config-map") {
      a.state.name = value;
    } else if (name == "now") {
      a.now = core::parseRfc3339(value);
      ok = a.now.has_value();
    } else if (name == "o" || name == "output") {
      a.output = value;
      ok = value == "text" || value == "json";
    } else if (auto mapping = applyGpuMappingFlag(a.gpuMapping, a.dcgm, name, value)) {
      ok = *mapping;
    } else {
      return false;
    }
    if (!ok || value.empty()) {
      return core::Status::badRequest("bad value \"" + value + "\" for --" + std::string(name));
    }
    return true;
  };
  auto rest = core::applyFlags(withLongOutputFlag(args), flags);
  if (!rest) {
    usage(err, rest.status().message());
    return std::nullopt;
  }
  for (const auto& word : *rest) {
    if (word.starts_with("-") || !a.hpa.empty()) {
      usage(err, "unexpected argument " + word);
      return std::nullopt;
    }
    a.hpa = word;
  }
  if (!a.hpa.empty() && a.hpa.find('/') == std::string::npos) {
    usage(err, "the HPA is NAMESPACE/NAME, not " + a.hpa);
    return std::nullopt;
  }
  const bool urlSet = std::any_of(all.begin(), all.end(), [](const std::string& arg) {
    return arg.starts_with("--prometheus-url");
  });
  if (a.gpuMapping == "dcgm" && !urlSet) {
    usage(err, "--gpu-mapping=dcgm needs --prometheus-url");
    return std::nullopt;
  }
  return a;
}

// What the controller watches, listed once, each item with its kind, plus the state ConfigMap.
core::Result<nlohmann::json> listCluster(const ExplainArgs& a) {
  auto config = kube::loadClientConfig(a.kubeconfig);
  if (!config) return config.status();
  config->userAgent = "gpuscale-reconciler/explain";
  auto client = kube::RestKubeClient::create(*config);
  if (!client) return client.status();
  nlohmann::json items = nlohmann::json::array();
  for (const auto& w : watchedResources()) {
    auto ref = kube::ResourceRef::collection(w.group, w.version, w.resource,
                                             w.operatorNamespaceOnly ? a.operatorNamespace : "");
    auto list = (*client)->list(ref, {});
    if (!list) return list.status();
    for (auto& item : list->items) {
      item["kind"] = w.kind;
      items.push_back(std::move(item));
    }
  }
  auto state = (*client)->get(
      kube::ResourceRef::collection("", "v1", "configmaps", a.state.ns).named(a.state.name));
  if (state) {
    (*state)["kind"] = "ConfigMap";
    items.push_back(std::move(*state));
  } else if (!k8s::isNotFound(state.status())) {
    return state.status();
  }
  return nlohmann::json{{"kind", "List"}, {"items", std::move(items)}};
}

}  // namespace

int runExplainCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  for (const auto& arg : args) {
    if (arg == "-h" || arg == "--help") {
      out << kUsage;
      return kExitOk;
    }
  }
  spdlog::set_level(spdlog::level::warn);
  auto parsed = parseArgs(args, err);
  if (!parsed) return kExitUsage;
  const ExplainArgs& a = *parsed;
  auto policies = loadPolicies(a.config, err);
  if (!policies) return kExitUsage;

  nlohmann::json dump;
  if (!a.from.empty()) {
    std::string text;
    if (!readInput(a.from, text, err)) return kExitUsage;
    dump = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (dump.is_discarded()) return usage(err, a.from + ": not valid JSON");
  } else {
    auto listed = listCluster(a);
    if (!listed) {
      err << "gpuscale-reconciler explain: reading the cluster: " << listed.status().message()
          << "\n";
      return kExitFailed;
    }
    dump = std::move(*listed);
  }

  std::unique_ptr<GpuPodMapping> mapping;
  if (a.gpuMapping == "dcgm") {
    auto prometheus = prom::HttpClient::create(a.prometheus);
    if (!prometheus) return usage(err, prometheus.status().message());
    mapping = std::make_unique<DcgmGpuPodMapping>(
        std::shared_ptr<prom::Client>(std::move(*prometheus)), a.dcgm, nullptr);
  }
  ExplainRequest request;
  if (!a.hpa.empty()) {
    request.ns = a.hpa.substr(0, a.hpa.find('/'));
    request.name = a.hpa.substr(a.hpa.find('/') + 1);
  }
  request.now = a.now.value_or(std::chrono::system_clock::now());
  request.gpuPods = mapping.get();
  auto explained = explainHpas(dump, a.state.name, *policies, request);
  if (!explained) {
    err << "gpuscale-reconciler explain: " << explained.status().message() << "\n";
    return k8s::isNotFound(explained.status()) ? kExitFailed : kExitUsage;
  }
  out << (a.output == "json" ? explanationsJson(*explained).dump(2) + "\n"
                             : explanationsText(*explained));
  return kExitOk;
}

}  // namespace gpuscale::reconciler
