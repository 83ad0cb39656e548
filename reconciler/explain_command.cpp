#include "explain_command.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "command_client.h"
#include "gpu_mapping_flags.h"
#include "gpuscale/core/flag_set.h"
#include "gpuscale/core/subcommands.h"
#include "gpuscale/k8s/status_predicates.h"
#include "gpuscale/prom/http_client.h"
#include "gpuscale/prom/options.h"
#include "gpuscale/reconciler/controller.h"
#include "gpuscale/reconciler/dcgm_gpu_pod_mapping.h"
#include "gpuscale/reconciler/hpa_explain.h"
#include "plan_command.h"

namespace gpuscale::reconciler {
namespace {

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

core::FlagSet explainFlagSet(ExplainArgs& a) {
  core::FlagSet flags(
      "gpuscale-reconciler explain",
      "gpuscale-reconciler explain [NAMESPACE/NAME | --hpa NAMESPACE/NAME] [flags]",
      "Why an HPA was (not) raised: the policy that manages it, whether it is held at its "
      "partition ceiling, and per node and lever why the planner would or would not add "
      "partitions (cooldown, policy cap, busy GPUs, limits, nodes in flight or backing off, "
      "...). Live it lists, read-only, what the controller watches plus its state ConfigMap; "
      "--from reads a `kubectl get nodes,pods,hpa,deployments,statefulsets,configmaps -A -o json` "
      "dump. Give it the policy file the reconciler runs with (without --policy: the built-in "
      "\"default\"). Without NAMESPACE/NAME it explains every HPA a policy manages.");
  flags.section("Explain flags");
  flags.addNonEmptyString("hpa", &a.hpa, "the HPA, NAMESPACE/NAME");
  flags.addNonEmptyString("from", &a.from, "a dump instead of the cluster (\"-\" for stdin)");
  flags.addNonEmptyString("kubeconfig", &a.kubeconfig,
                          "kubeconfig (default in-cluster, then $KUBECONFIG)");
  flags.addNonEmptyString("policy", &a.config, "partition policy file (docs/generated/policy.md)")
      .deprecatedName("config");
  flags.addNonEmptyString("operator-namespace", &a.operatorNamespace,
                          "the GPU Operator's namespace");
  flags.addNonEmptyString("state-namespace", &a.state.ns, "namespace of the state ConfigMap");
  flags.addNonEmptyString("state-config-map", &a.state.name, "the reconciler's state ConfigMap");
  addNowFlag(flags, &a.now);
  addOutputFlag(flags, &a.output);
  flags.section("GPU mapping flags", "As for run.");
  addGpuMappingFlags(flags, &a.gpuMapping, &a.dcgm);
  flags.section("Prometheus flags", "The Prometheus that --gpu-mapping=dcgm asks.");
  a.prometheus.addFlags(flags);
  return flags;
}

int fail(std::ostream& err, const std::string& message) {
  err << "gpuscale-reconciler explain: " << message << "\n";
  return core::kExitError;
}

// Parses the flags into `a`; nullopt when the command should run, else its exit code.
std::optional<int> parseArgs(const std::vector<std::string>& args, ExplainArgs& a,
                             std::ostream& out, std::ostream& err) {
  core::FlagSet flags = explainFlagSet(a);
  std::vector<std::string> rest;
  if (auto exitCode = flags.parseCommand(args, out, err, &rest)) return exitCode;
  for (const auto& word : rest) {
    if (!a.hpa.empty()) return flags.usageError(err, "unexpected argument " + word);
    a.hpa = word;
  }
  if (!a.hpa.empty() && a.hpa.find('/') == std::string::npos) {
    return flags.usageError(err, "the HPA is NAMESPACE/NAME, not " + a.hpa);
  }
  if (a.gpuMapping == "dcgm" && !flags.changed("prometheus-url")) {
    return flags.usageError(err, "--gpu-mapping=dcgm needs --prometheus-url");
  }
  return std::nullopt;
}

// What the controller watches, listed once, each item with its kind, plus the state ConfigMap.
// The optional kinds (watchedResources()) the cluster does not serve or lets it not read are left
// out, with a warning.
core::Result<nlohmann::json> listCluster(const ExplainArgs& a) {
  auto client = commandClient(a.kubeconfig, "explain");
  if (!client) return client.status();
  nlohmann::json items = nlohmann::json::array();
  for (const auto& w : watchedResources()) {
    auto ref = kube::ResourceRef::collection(w.group, w.version, w.resource,
                                             w.operatorNamespaceOnly ? a.operatorNamespace : "");
    auto list = (*client)->list(ref, {});
    // A kind the cluster may not serve (DRA before 1.34) is explained without, as it is planned.
    if (!list && w.optional &&
        (k8s::isNotFound(list.status()) || list.status().httpCode() == 403)) {
      spdlog::warn("not reading {}: {} (explained without them)", w.resource,
                   list.status().message());
      continue;
    }
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

std::string explainFlagReference() { return core::markdownOf(explainFlagSet); }

int runExplainCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ExplainArgs a;
  if (auto exitCode = parseArgs(args, a, out, err)) return *exitCode;
  spdlog::set_level(spdlog::level::warn);
  auto policies = loadPolicies(a.config, err);
  if (!policies) return core::kExitError;

  nlohmann::json dump;
  if (!a.from.empty()) {
    std::string text;
    if (!readInput(a.from, text, err)) return core::kExitError;
    dump = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (dump.is_discarded()) return fail(err, a.from + ": not valid JSON");
  } else {
    auto listed = listCluster(a);
    if (!listed) {
      err << "gpuscale-reconciler explain: reading the cluster: " << listed.status().message()
          << "\n";
      return core::kExitFailed;
    }
    dump = std::move(*listed);
  }

  std::unique_ptr<GpuPodMapping> mapping;
  if (a.gpuMapping == "dcgm") {
    auto prometheus = prom::HttpClient::create(a.prometheus);
    if (!prometheus) return fail(err, prometheus.status().message());
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
    return k8s::isNotFound(explained.status()) ? core::kExitFailed : core::kExitError;
  }
  out << (a.output == "json" ? explanationsJson(*explained).dump(2) + "\n"
                             : explanationsText(*explained));
  return core::kExitOk;
}

}  // namespace gpuscale::reconciler
