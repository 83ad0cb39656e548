#include "gpuscale/sim/scenario.h"

#include <cmath>
#include <fstream>
#include <numbers>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "gpuscale/core/enum_names.h"
#include "gpuscale/core/files.h"
#include "gpuscale/core/yaml_input.h"
#include "gpuscale/partition/mig_catalog.h"
#include "gpuscale/partition/mig_geometry.h"
#include "gpuscale/sim/dra_devices.h"

namespace gpuscale::sim {
namespace {

constexpr core::EnumNames<FailureMode, 4> kFailureModeNames{{
    {FailureMode::kFail, "fail"},
    {FailureMode::kHang, "hang"},
    {FailureMode::kIgnore, "ignore"},
    {FailureMode::kHangRebooting, "hang-rebooting"},
}};

constexpr core::EnumNames<LoadPatternKind, 4> kLoadPatternNames{{
    {LoadPatternKind::kConstant, "constant"},
    {LoadPatternKind::kRamp, "ramp"},
    {LoadPatternKind::kSpike, "spike"},
    {LoadPatternKind::kDiurnal, "diurnal"},
}};

using partition::MigGpuSetting;

[[noreturn]] void fail(const YAML::Node& node, std::string_view message) {
  core::yamlFail(node, message);
}

// A mapping whose keys must all be in `known`.
void expectKeys(const YAML::Node& node, std::string_view what,
                std::initializer_list<std::string_view> known) {
  if (!node.IsMap()) fail(node, fmt::format("{} must be a mapping", what));
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      fail(kv.first, fmt::format("unknown field \"{}\" in {}", key, what));
    }
  }
}

template <typename T>
T get(const YAML::Node& parent, std::string_view key, T fallback) {
  const YAML::Node node = parent[std::string(key)];
  if (!node || node.IsNull()) return fallback;
  return core::yamlAs<T>(node, key);
}

double nonNegative(const YAML::Node& parent, std::string_view key, double fallback) {
  double v = get<double>(parent, key, fallback);
  if (!(v >= 0) || !std::isfinite(v)) {
    fail(parent[std::string(key)], fmt::format("\"{}\" must be a finite number >= 0", key));
  }
  return v;
}

std::chrono::milliseconds seconds(const YAML::Node& parent, std::string_view key,
                                  std::chrono::milliseconds fallback) {
  double s = nonNegative(parent, key, fallback.count() / 1000.0);
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(s * 1000)));
}

std::map<std::string, std::string> stringMap(const YAML::Node& node, std::string_view what) {
  std::map<std::string, std::string> out;
  if (!node || node.IsNull()) return out;
  if (!node.IsMap()) fail(node, fmt::format("{} must be a mapping of strings", what));
  for (const auto& kv : node) {
    if (!kv.second.IsScalar()) fail(kv.second, fmt::format("{} values must be strings", what));
    out[kv.first.as<std::string>()] = kv.second.as<std::string>();
  }
  return out;
}

bool isDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.')) {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

std::vector<InjectedFailure> parseFailures(const YAML::Node& node) {
  std::vector<InjectedFailure> out;
  if (!node || node.IsNull()) return out;
  if (!node.IsSequence()) fail(node, "failures must be a list");
  for (const auto& item : node) {
    expectKeys(item, "a failure", {"reconfiguration", "mode"});
    InjectedFailure f;
    if (item["reconfiguration"]) {
      int n = get<int>(item, "reconfiguration", 0);
      if (n < 1) fail(item["reconfiguration"], "reconfiguration counts from 1");
      f.reconfiguration = n;
    }
    const auto mode = get<std::string>(item, "mode", "fail");
    if (auto known = core::enumValue(kFailureModeNames, mode)) {
      f.mode = *known;
    } else {
      fail(item["mode"], fmt::format("unknown failure mode \"{}\" (fail, hang, hang-rebooting, "
                                     "ignore)",
                                     mode));
    }
    out.push_back(f);
  }
  return out;
}

std::vector<MigGpuSetting> parseGeometry(const YAML::Node& node, const GpuNodeSpec& spec) {
  std::vector<MigGpuSetting> out;
  if (!node.IsSequence()) fail(node, "geometry must be a list with one entry per GPU");
  const partition::GpuModel* model = partition::matchModel(spec.product, spec.memoryMiB);
  for (const auto& item : node) {
    const auto text = item.as<std::string>();
    MigGpuSetting setting;
    if (text != "disabled") {
      auto g = partition::parseGeometry(text);
      if (!g) fail(item, g.status().message());
      if (model == nullptr)
        fail(item, fmt::format("no MIG-capable model matches \"{}\"", spec.product));
      if (!partition::isValidGeometry(*model, *g)) {
        fail(item, fmt::format("geometry \"{}\" does not fit a {}", text, model->name));
      }
      setting.migEnabled = true;
      setting.geometry = std::move(*g);
    }
    out.push_back(std::move(setting));
  }
  if (static_cast<int>(out.size()) != spec.gpus) {
    fail(node, fmt::format("geometry lists {} GPUs, the node has {}", out.size(), spec.gpus));
  }
  return out;
}

// A node's `migManager:`: whether one runs there, how its absence shows, how long its runs take.
void parseNodeMigManager(const YAML::Node& node, GpuNodeSpec& spec) {
  if (!node || node.IsNull()) return;
  if (!spec.migCapable) fail(node, "migManager on a node that is not MIG-capable");
  expectKeys(node, "migManager", {"present", "stateLabel", "reconfigureSeconds"});
  spec.migManagerPresent = get<bool>(node, "present", true);
  const auto state = get<std::string>(node, "stateLabel", "absent");
  if (state != "absent" && state != "empty")
    fail(node["stateLabel"], "stateLabel is absent or empty");
  if (spec.migManagerPresent && node["stateLabel"])
    fail(node["stateLabel"], "stateLabel describes a node without mig-manager (present: false)");
  spec.emptyMigState = state == "empty";
  if (node["reconfigureSeconds"]) {
    if (!spec.migManagerPresent)
      fail(node["reconfigureSeconds"], "reconfigureSeconds needs a mig-manager (present: true)");
    spec.reconfigureDelay = seconds(node, "reconfigureSeconds", std::chrono::milliseconds{0});
  }
}

DraSpec parseDra(const YAML::Node& node) {
  DraSpec dra;
  if (node.IsNull()) return dra;
  expectKeys(node, "dra",
             {"dynamicMig", "productName", "architecture", "cudaComputeCapability", "brand",
              "driverVersion", "cudaDriverVersion"});
  dra.dynamicMig = get<bool>(node, "dynamicMig", dra.dynamicMig);
  dra.productName = get<std::string>(node, "productName", "");
  dra.architecture = get<std::string>(node, "architecture", "");
  dra.cudaComputeCapability = get<std::string>(node, "cudaComputeCapability", "");
  dra.brand = get<std::string>(node, "brand", dra.brand);
  dra.driverVersion = get<std::string>(node, "driverVersion", dra.driverVersion);
  dra.cudaDriverVersion = get<std::string>(node, "cudaDriverVersion", dra.cudaDriverVersion);
  return dra;
}

GpuNodeSpec parseNode(const YAML::Node& node) {
  expectKeys(
      node, "a node",
      {"name", "product", "gpus", "memoryMiB", "migCapable", "migStrategy", "migConfig", "geometry",
       "devicePluginConfig", "labels", "cpu", "memory", "pods", "failures", "dra", "migManager"});
  GpuNodeSpec spec;
  spec.name = get<std::string>(node, "name", "");
  if (!isDnsLabel(spec.name)) fail(node, fmt::format("node name \"{}\" is not valid", spec.name));
  spec.product = get<std::string>(node, "product", "");
  if (spec.product.empty()) fail(node, "a node needs a product");
  spec.gpus = get<int>(node, "gpus", 1);
  if (spec.gpus < 1 || spec.gpus > 64) fail(node["gpus"], "gpus must be 1..64");
  spec.memoryMiB = get<int64_t>(node, "memoryMiB", 0);
  if (spec.memoryMiB <= 0) fail(node, "memoryMiB must be > 0");
  const partition::GpuModel* model = partition::matchModel(spec.product, spec.memoryMiB);
  spec.migCapable = get<bool>(node, "migCapable", model != nullptr);
  if (spec.migCapable && model == nullptr) {
    fail(node, fmt::format("migCapable, but no catalog model matches \"{}\"", spec.product));
  }
  const auto strategy = get<std::string>(node, "migStrategy", spec.migCapable ? "single" : "none");
  auto parsed = partition::parseMigStrategy(strategy);
  if (!parsed) fail(node["migStrategy"], fmt::format("unknown migStrategy \"{}\"", strategy));
  spec.migStrategy = *parsed;
  spec.migConfig = get<std::string>(node, "migConfig", "");
  if (node["geometry"]) {
    if (!spec.migConfig.empty()) fail(node["geometry"], "give migConfig or geometry, not both");
    spec.geometry = parseGeometry(node["geometry"], spec);
  }
  if (!spec.migCapable && (!spec.migConfig.empty() || !spec.geometry.empty())) {
    fail(node, "MIG settings on a node that is not MIG-capable");
  }
  spec.devicePluginConfig = get<std::string>(node, "devicePluginConfig", "");
  spec.labels = stringMap(node["labels"], "labels");
  spec.cpu = get<std::string>(node, "cpu", spec.cpu);
  spec.memory = get<std::string>(node, "memory", spec.memory);
  spec.pods = get<std::string>(node, "pods", spec.pods);
  spec.failures = parseFailures(node["failures"]);
  parseNodeMigManager(node["migManager"], spec);
  if (node["dra"]) {
    if (!spec.devicePluginConfig.empty())
      fail(node["dra"], "a DRA node runs no device plugin (drop devicePluginConfig)");
    spec.dra = parseDra(node["dra"]);
    if (auto s = validateDra(spec); !s.ok()) fail(node["dra"], s.message());
  }
  return spec;
}

OperatorSpec parseOperator(const YAML::Node& node) {
  OperatorSpec op;
  if (!node || node.IsNull()) return op;
  expectKeys(node, "gpuOperator",
             {"namespace", "migManager", "devicePlugin", "dcgmExporter", "configMapSyncSeconds"});
  op.namespaceName = get<std::string>(node, "namespace", op.namespaceName);
  op.configMapSync = seconds(node, "configMapSyncSeconds", op.configMapSync);
  if (const YAML::Node mm = node["migManager"]; mm && !mm.IsNull()) {
    expectKeys(mm, "migManager",
               {"defaultConfigMap", "customConfigMap", "customConfig", "reconfigureSeconds",
                "modeChangeSeconds", "modeChangeReboots", "rebootSeconds"});
    op.defaultMigConfigMap = get<std::string>(mm, "defaultConfigMap", op.defaultMigConfigMap);
    op.customMigConfigMap = get<std::string>(mm, "customConfigMap", "");
    if (mm["customConfig"]) {
      auto parsed = partition::parseMigPartedConfig(get<std::string>(mm, "customConfig", ""));
      if (!parsed) fail(mm["customConfig"], parsed.status().message());
      op.customMigConfig = std::move(*parsed);
      if (op.customMigConfigMap.empty()) op.customMigConfigMap = "custom-mig-parted-config";
    }
    op.reconfigureDelay = seconds(mm, "reconfigureSeconds", op.reconfigureDelay);
    op.modeChange.delay = seconds(mm, "modeChangeSeconds", op.modeChange.delay);
    op.modeChange.reboots = get<bool>(mm, "modeChangeReboots", op.modeChange.reboots);
    op.modeChange.rebootDelay = seconds(mm, "rebootSeconds", op.modeChange.rebootDelay);
  }
  if (const YAML::Node dp = node["devicePlugin"]; dp && !dp.IsNull()) {
    expectKeys(dp, "devicePlugin", {"configMap", "default", "configs", "reloadSeconds"});
    op.devicePluginConfigMap = get<std::string>(dp, "configMap", op.devicePluginConfigMap);
    op.devicePluginDefault = get<std::string>(dp, "default", "");
    op.devicePluginConfigs = stringMap(dp["configs"], "devicePlugin.configs");
    for (const auto& [key, text] : op.devicePluginConfigs) {
      auto parsed = partition::parseDevicePluginConfig(text);
      if (!parsed)
        fail(dp["configs"][key], fmt::format("config \"{}\": {}", key, parsed.status().message()));
    }
    if (!op.devicePluginDefault.empty() &&
        !op.devicePluginConfigs.contains(op.devicePluginDefault)) {
      fail(dp["default"],
           fmt::format("default config \"{}\" is not in configs", op.devicePluginDefault));
    }
    op.devicePluginReload = seconds(dp, "reloadSeconds", op.devicePluginReload);
  }
  if (const YAML::Node de = node["dcgmExporter"]; de && !de.IsNull()) {
    expectKeys(de, "dcgmExporter", {"podDelaySeconds"});
    op.dcgmPodDelay = seconds(de, "podDelaySeconds", op.dcgmPodDelay);
  }
  return op;
}

LoadPattern parsePattern(const YAML::Node& node) {
  expectKeys(node, "load.pattern",
             {"kind", "baseRps", "peakRps", "startSeconds", "durationSeconds"});
  LoadPattern p;
  const auto kind = get<std::string>(node, "kind", "constant");
  if (auto known = core::enumValue(kLoadPatternNames, kind)) {
    p.kind = *known;
  } else {
    fail(node["kind"],
         fmt::format("unknown pattern \"{}\" (constant, ramp, spike, diurnal)", kind));
  }
  p.baseRps = nonNegative(node, "baseRps", 0);
  p.peakRps = nonNegative(node, "peakRps", p.baseRps);
  p.startSeconds = nonNegative(node, "startSeconds", 0);
  p.durationSeconds = nonNegative(node, "durationSeconds", 0);
  if (p.kind != LoadPatternKind::kConstant && p.durationSeconds <= 0) {
    fail(node, fmt::format("a {} pattern needs durationSeconds > 0", kind));
  }
  return p;
}

VllmRequestShape parseVllmShape(const YAML::Node& node) {
  expectKeys(node, "load.vllm", {"promptTokens", "outputTokens", "prefillShare", "kvCacheTokens"});
  VllmRequestShape shape;
  shape.promptTokens = nonNegative(node, "promptTokens", shape.promptTokens);
  shape.outputTokens = nonNegative(node, "outputTokens", shape.outputTokens);
  shape.prefillShare = nonNegative(node, "prefillShare", shape.prefillShare);
  if (shape.prefillShare > 1) fail(node["prefillShare"], "prefillShare is a share in [0, 1]");
  shape.kvCacheTokens = nonNegative(node, "kvCacheTokens", shape.kvCacheTokens);
  if (shape.kvCacheTokens <= 0) fail(node["kvCacheTokens"], "kvCacheTokens must be > 0");
  return shape;
}

LoadSpec parseLoad(const YAML::Node& node) {
  if (!node.IsMap()) fail(node, "load must be a mapping");
  expectKeys(node, "load",
             {"namespace", "podSelector", "model", "pattern", "gpuMillisOnFullGpu", "cpuMillis",
              "gpuUtilization", "timeSlicingOverhead", "vllm"});
  LoadSpec load;
  load.namespaceName = get<std::string>(node, "namespace", load.namespaceName);
  load.podSelector = get<std::string>(node, "podSelector", "");
  if (load.podSelector.empty()) fail(node, "load needs a podSelector");
  load.model = get<std::string>(node, "model", load.model);
  if (node["pattern"]) load.pattern = parsePattern(node["pattern"]);
  load.gpuMillisOnFullGpu = nonNegative(node, "gpuMillisOnFullGpu", 0);
  load.cpuMillis = nonNegative(node, "cpuMillis", 0);
  load.gpuUtilization = nonNegative(node, "gpuUtilization", load.gpuUtilization);
  if (load.gpuUtilization <= 0 || load.gpuUtilization > 1) {
    fail(node["gpuUtilization"], "gpuUtilization is a share in (0, 1]");
  }
  load.timeSlicingOverhead = nonNegative(node, "timeSlicingOverhead", load.timeSlicingOverhead);
  if (const YAML::Node v = node["vllm"]; v && !v.IsNull()) load.vllm = parseVllmShape(v);
  return load;
}

// `workload.claim` (of the scenario or of one service): a DeviceClass and an optional selector.
void parseClaim(const YAML::Node& c, const std::string& where, std::string& deviceClass,
                std::string& selector) {
  expectKeys(c, where, {"deviceClass", "selector"});
  deviceClass = get<std::string>(c, "deviceClass", "");
  selector = get<std::string>(c, "selector", "");
  if (deviceClass.empty()) fail(c, where + " needs a deviceClass");
}

std::vector<ServiceSpec> parseServices(const YAML::Node& node) {
  if (!node.IsSequence() || node.size() == 0) fail(node, "services must be a non-empty list");
  std::vector<ServiceSpec> out;
  std::set<std::string> names;
  std::set<std::pair<std::string, std::string>> selectors;
  for (const auto& item : node) {
    expectKeys(item, "a service", {"name", "priority", "sloSeconds", "load", "workload"});
    ServiceSpec service;
    service.name = get<std::string>(item, "name", "");
    if (!isDnsLabel(service.name) || service.name.find('.') != std::string::npos) {
      fail(item, fmt::format("service name \"{}\" is not a DNS label", service.name));
    }
    if (!names.insert(service.name).second) {
      fail(item, fmt::format("service \"{}\" appears twice", service.name));
    }
    service.priority = get<int>(item, "priority", 0);
    // The bound of user-defined PriorityClass values: the harness creates one per service.
    if (service.priority > 1'000'000'000) fail(item["priority"], "priority must be <= 1000000000");
    if (item["sloSeconds"]) {
      const double slo = nonNegative(item, "sloSeconds", 0);
      if (slo <= 0) fail(item["sloSeconds"], "sloSeconds must be > 0");
      service.sloMicros = static_cast<std::int64_t>(std::llround(slo * 1e6));
    }
    if (const YAML::Node w = item["workload"]; w && !w.IsNull()) {
      expectKeys(w, "a service's workload", {"claim"});
      if (const YAML::Node c = w["claim"]; c && !c.IsNull()) {
        parseClaim(c, "a service's workload.claim", service.claimDeviceClass,
                   service.claimSelector);
      }
    }
    if (!item["load"] || item["load"].IsNull()) fail(item, "a service needs a load");
    service.load = parseLoad(item["load"]);
    if (!selectors.insert({service.load.namespaceName, service.load.podSelector}).second) {
      fail(item["load"], fmt::format("another service already selects \"{}\" in {}",
                                     service.load.podSelector, service.load.namespaceName));
    }
    out.push_back(std::move(service));
  }
  return out;
}

// Explicit per-GPU geometries become a named config `<node>-initial` in the custom ConfigMap, so
// the node's mig.config label resolves like any other (the reconciler reads geometry from it).
void addInitialConfigs(Scenario& s) {
  for (auto& node : s.nodes) {
    if (node.geometry.empty()) continue;
    auto& op = s.gpuOperator;
    if (!op.customMigConfig) op.customMigConfig.emplace();
    if (op.customMigConfigMap.empty()) op.customMigConfigMap = "custom-mig-parted-config";
    node.migConfig = node.name + "-initial";
    op.customMigConfig->configs[node.migConfig] = partition::perGpuEntries(node.geometry);
  }
}

int intInRange(const YAML::Node& parent, std::string_view key, int fallback, int min, int max) {
  const int v = get<int>(parent, key, fallback);
  if (v < min || v > max) {
    fail(parent[std::string(key)], fmt::format("\"{}\" must be in [{}, {}]", key, min, max));
  }
  return v;
}

// The bounds are autoscaling/v2's for behavior.scaleDown.
HarnessScaleDown parseScaleDown(const YAML::Node& d) {
  HarnessScaleDown out;
  if (!d || d.IsNull()) return out;
  expectKeys(d, "hpa.scaleDown",
             {"pods", "percent", "periodSeconds", "stabilizationWindowSeconds"});
  if (d["pods"] && d["percent"]) fail(d, "hpa.scaleDown takes pods or percent, not both");
  out.percent = static_cast<bool>(d["percent"]);
  out.value =
      intInRange(d, out.percent ? "percent" : "pods", out.value, 1, out.percent ? 100 : 1000);
  out.periodSeconds = intInRange(d, "periodSeconds", out.periodSeconds, 1, 1800);
  out.stabilizationWindowSeconds =
      intInRange(d, "stabilizationWindowSeconds", out.stabilizationWindowSeconds, 0, 3600);
  return out;
}

// Only the policies given count (as in autoscaling/v2); with neither, the controller's default
// pair. Percent may exceed 100 for scale-out.
HarnessScaleUp parseScaleUp(const YAML::Node& u) {
  HarnessScaleUp out;
  if (!u || u.IsNull()) return out;
  expectKeys(u, "hpa.scaleUp", {"pods", "percent", "periodSeconds", "stabilizationWindowSeconds"});
  out.given = true;
  if (u["pods"] || u["percent"]) {
    out.percent.reset();
    out.pods.reset();
    if (u["percent"]) out.percent = intInRange(u, "percent", 100, 1, 10000);
    if (u["pods"]) out.pods = intInRange(u, "pods", 4, 1, 1000);
  }
  out.periodSeconds = intInRange(u, "periodSeconds", out.periodSeconds, 1, 1800);
  out.stabilizationWindowSeconds =
      intInRange(u, "stabilizationWindowSeconds", out.stabilizationWindowSeconds, 0, 3600);
  return out;
}

void parseHpa(const YAML::Node& hpa, Scenario& s) {
  expectKeys(hpa, "hpa", {"scaleDown", "scaleUp"});
  s.hpaScaleDown = parseScaleDown(hpa["scaleDown"]);
  s.hpaScaleUp = parseScaleUp(hpa["scaleUp"]);
}

Scenario parseRoot(const YAML::Node& root) {
  expectKeys(root, "the scenario",
             {"name", "description", "gpuOperator", "nodes", "load", "services", "reconciler",
              "hpa", "workload"});
  Scenario s;
  s.name = get<std::string>(root, "name", "");
  if (s.name.empty()) fail(root, "a scenario needs a name");
  s.description = get<std::string>(root, "description", "");
  s.gpuOperator = parseOperator(root["gpuOperator"]);
  const YAML::Node nodes = root["nodes"];
  if (!nodes || !nodes.IsSequence() || nodes.size() == 0) fail(root, "a scenario needs nodes");
  std::set<std::string> names;
  for (const auto& n : nodes) {
    s.nodes.push_back(parseNode(n));
    if (!names.insert(s.nodes.back().name).second) {
      fail(n, fmt::format("node \"{}\" appears twice", s.nodes.back().name));
    }
    const std::string& dp = s.nodes.back().devicePluginConfig;
    if (!dp.empty() && !s.gpuOperator.devicePluginConfigs.contains(dp)) {
      fail(n,
           fmt::format("devicePluginConfig \"{}\" is not in gpuOperator.devicePlugin.configs", dp));
    }
  }
  if (root["load"] && !root["load"].IsNull()) s.load = parseLoad(root["load"]);
  if (const YAML::Node sv = root["services"]; sv && !sv.IsNull()) {
    if (s.load) fail(sv, "give load or services, not both");
    s.services = parseServices(sv);
  }
  if (const YAML::Node r = root["reconciler"]; r && !r.IsNull()) {
    expectKeys(r, "reconciler", {"gpuMapping"});
    s.reconcilerGpuMapping = get<std::string>(r, "gpuMapping", s.reconcilerGpuMapping);
    if (s.reconcilerGpuMapping != "node" && s.reconcilerGpuMapping != "dcgm") {
      fail(r["gpuMapping"], "gpuMapping is node or dcgm");
    }
  }
  if (const YAML::Node h = root["hpa"]; h && !h.IsNull()) parseHpa(h, s);
  if (const YAML::Node w = root["workload"]; w && !w.IsNull()) {
    expectKeys(w, "workload",
               {"resource", "nodeSelector", "server", "args", "claim", "scaler", "kind", "size"});
    s.workloadResource = get<std::string>(w, "resource", "");
    if (!s.workloadResource.empty() && !s.workloadResource.starts_with("nvidia.com/"))
      fail(w["resource"], "workload.resource must be an nvidia.com/ resource");
    s.workloadNodeSelector = stringMap(w["nodeSelector"], "workload.nodeSelector");
    const auto server = get<std::string>(w, "server", "triton");
    if (server == "vllm") {
      s.workloadServer = InferenceServer::kVllm;
    } else if (server != "triton") {
      fail(w["server"], fmt::format("unknown server \"{}\" (triton, vllm)", server));
    }
    if (const YAML::Node c = w["claim"]; c && !c.IsNull()) {
      parseClaim(c, "workload.claim", s.workloadClaimDeviceClass, s.workloadClaimSelector);
      if (!s.workloadResource.empty())
        fail(c, "workload.claim and workload.resource exclude each other");
    }
    if (const YAML::Node args = w["args"]; args && !args.IsNull()) {
      if (!args.IsSequence()) fail(args, "workload.args must be a list of strings");
      for (const auto& a : args) {
        if (!a.IsScalar()) fail(a, "workload.args must be a list of strings");
        s.workloadArgs.push_back(a.as<std::string>());
      }
    }
    s.workloadScaler = get<std::string>(w, "scaler", "hpa");
    if (s.workloadScaler != "hpa" && s.workloadScaler != "keda" && s.workloadScaler != "planner")
      fail(w["scaler"], "workload.scaler is hpa, keda or planner");
    s.workloadKind = get<std::string>(w, "kind", "Deployment");
    if (s.workloadKind != "Deployment" && s.workloadKind != "LeaderWorkerSet")
      fail(w["kind"], "workload.kind is Deployment or LeaderWorkerSet");
    s.workloadSize = get<int>(w, "size", 1);
    if (s.workloadSize < 1 || (s.workloadSize > 1 && s.workloadKind != "LeaderWorkerSet"))
      fail(w["size"], "workload.size is 1, or more for a LeaderWorkerSet");
  }
  addInitialConfigs(s);
  return s;
}

}  // namespace

std::string_view failureModeName(FailureMode mode) {
  return core::enumName(kFailureModeNames, mode, "fail");
}

std::string_view inferenceServerName(InferenceServer server) {
  return server == InferenceServer::kVllm ? "vllm" : "triton";
}

std::string_view loadPatternName(LoadPatternKind kind) {
  return core::enumName(kLoadPatternNames, kind, "constant");
}

const InjectedFailure* GpuNodeSpec::failureFor(int n) const {
  for (const auto& f : failures) {
    if (f.appliesTo(n)) return &f;
  }
  return nullptr;
}

double LoadPattern::rateAt(double t) const {
  switch (kind) {
    case LoadPatternKind::kConstant:
      return baseRps;
    case LoadPatternKind::kRamp: {
      double x = std::clamp((t - startSeconds) / durationSeconds, 0.0, 1.0);
      return baseRps + (peakRps - baseRps) * x;
    }
    case LoadPatternKind::kSpike:
      return t >= startSeconds && t < startSeconds + durationSeconds ? peakRps : baseRps;
    case LoadPatternKind::kDiurnal: {
      // Mean baseRps, crest peakRps at a quarter period after startSeconds.
      double phase = 2 * std::numbers::pi * (t - startSeconds) / durationSeconds;
      return std::max(0.0, baseRps + (peakRps - baseRps) * std::sin(phase));
    }
  }
  return baseRps;
}

std::vector<ServiceSpec> Scenario::loadServices() const {
  if (!services.empty()) return services;
  if (!load) return {};
  ServiceSpec single;
  single.load = *load;
  return {single};
}

core::Result<Scenario> parseScenario(std::string_view yaml) {
  return core::guardYaml<Scenario>("scenario",
                                   [&] { return parseRoot(YAML::Load(std::string(yaml))); });
}

core::Result<Scenario> loadScenarioFile(const std::string& path) {
  auto text = core::readFile(path);
  if (!text) return core::Status::invalid(fmt::format("cannot read scenario file {}", path));
  auto s = parseScenario(*text);
  if (!s) return s.status().withContext(path);
  return s;
}

}  // namespace gpuscale::sim
