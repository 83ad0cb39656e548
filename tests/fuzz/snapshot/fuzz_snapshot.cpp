// Structure-aware fuzzing of the reconciler's pass over what a cluster may hold: the input bytes
// choose a list of Kubernetes objects of the kinds the snapshot reads (GPU nodes with any labels,
// allocatable and annotations, pods with any containers, requests and status, workloads, priority
// classes, the GPU Operator's ConfigMaps, the reconciler's state ConfigMap, DRA's ResourceSlices,
// DeviceClasses, ResourceClaimTemplates and ResourceClaims with CEL selectors in and outside the
// subset the planner evaluates, and bytes as selectors) and HPAs that
// kube-apiserver's validation admits (every metric source with every target permutation it lets
// through, int32 limits, any scale target kind, empty or partial status), with label sets up to a
// few hundred entries. Then the controller's pass (reconciler/pass.h) plans over them and
// `explain` explains the result.
//
// What must hold for every input: the snapshot builds (no object stops it); every generated HPA is
// read (the API admits it, so the reader must understand it); every skipped object has a reason
// and a message; the plan and the explanations serialise. Crashes, sanitizer reports (including
// signed overflow and out-of-range float conversions) and exceptions fail the run.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/reconciler/hpa_explain.h"
#include "gpuscale/reconciler/hpa_state_store.h"
#include "gpuscale/reconciler/pass.h"

namespace {

using nlohmann::json;
constexpr std::int32_t kInt32Max = std::numeric_limits<std::int32_t>::max();

[[noreturn]] void fail(const std::string& what, const json& dump) {
  std::fprintf(stderr, "fuzz_snapshot: %s for %s\n", what.c_str(), dump.dump().c_str());
  std::abort();
}

template <std::size_t N>
std::string pick(FuzzedDataProvider& p, const char* const (&values)[N]) {
  return p.PickValueInArray(values);
}

// An int32 that lingers at the edges: 0, 1, small, the maximum.
std::int32_t int32(FuzzedDataProvider& p, std::int32_t min) {
  switch (p.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return min;
    case 1:
      return std::max(min, p.ConsumeIntegralInRange<std::int32_t>(0, 64));
    case 2:
      return kInt32Max;
    default:
      return p.ConsumeIntegralInRange<std::int32_t>(min, kInt32Max);
  }
}

// A quantity as Kubernetes may write it (and, unless `valid`, some it never would).
std::string quantity(FuzzedDataProvider& p, bool valid = false) {
  const auto n = p.ConsumeIntegralInRange<std::int64_t>(0, 100000);
  switch (p.ConsumeIntegralInRange<int>(0, valid ? 6 : 7)) {
    case 0:
      return std::to_string(n);
    case 1:
      return std::to_string(n) + "m";
    case 2:
      return std::to_string(n % 10) + "e" + std::to_string(p.ConsumeIntegralInRange<int>(0, 30));
    case 3:
      return "9223372036854775807";
    case 4:
      return std::to_string(n) + ".5";
    case 5:
      return std::to_string(n % 100) + pick(p, {"Ki", "Mi", "Gi", "k", "M", "G", "T", "E"});
    case 6:
      return std::to_string(p.ConsumeIntegral<std::int64_t>());
    default:
      return p.ConsumeRandomLengthString(8);
  }
}

std::string positiveQuantity(FuzzedDataProvider& p) {
  switch (p.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return std::to_string(p.ConsumeIntegralInRange<std::int64_t>(1, 1000000));
    case 1:
      return std::to_string(p.ConsumeIntegralInRange<std::int64_t>(1, 999999)) + "m";
    case 2:
      return "1e" + std::to_string(p.ConsumeIntegralInRange<int>(-9, 300));
    default:
      return "9223372036854775807";
  }
}

// Up to a few hundred labels; some with the keys the planner looks at.
json labels(FuzzedDataProvider& p, json base) {
  const int extra = p.ConsumeBool() ? p.ConsumeIntegralInRange<int>(0, 300) : 0;
  for (int i = 0; i < extra; ++i) {
    base["example.com/k" + std::to_string(i)] = std::to_string(p.ConsumeIntegral<std::uint16_t>());
  }
  return base;
}

const char* const kNodes[] = {"n0", "n1", "n2"};
const char* const kNamespaces[] = {"default", "other"};
const char* const kApps[] = {"a", "b", "c"};
const char* const kGpuResources[] = {"nvidia.com/gpu", "nvidia.com/mig-1g.5gb",
                                     "nvidia.com/mig-3g.20gb", "nvidia.com/gpu.shared",
                                     "nvidia.com/mig-2g.10gb"};

json node(FuzzedDataProvider& p) {
  json l{
      {"nvidia.com/gpu.product",
       pick(p, {"NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3",
                "Tesla-T4", "Tesla-T4-SHARED", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "x"})},
      {"nvidia.com/gpu.count", pick(p, {"1", "2", "8", "0", "99999999999", "-1", "x"})},
      {"nvidia.com/mig.capable", pick(p, {"true", "false"})},
      {"nvidia.com/mig.strategy", pick(p, {"mixed", "single", "none", ""})},
      {"nvidia.com/mig.config",
       pick(p, {"all-1g.5gb", "all-balanced", "all-disabled", "all-3g.20gb", "custom"})},
      {"nvidia.com/mig.config.state", pick(p, {"success", "pending", "failed", "rebooting", ""})},
      {"nvidia.com/gpu.memory", pick(p, {"40960", "81920", "15360", "0", "1e30"})}};
  if (p.ConsumeBool()) l["nvidia.com/mig-1g.5gb.count"] = quantity(p);
  if (p.ConsumeBool()) l["nvidia.com/gpu.replicas"] = quantity(p);
  if (p.ConsumeBool()) l["nvidia.com/device-plugin.config"] = pick(p, {"ts-4", "mps-2", "absent"});
  if (p.ConsumeBool()) l["nvidia.com/gpu.deploy.device-plugin"] = "paused-for-mig-change";
  json allocatable = json::object();
  for (int i = p.ConsumeIntegralInRange<int>(0, 3); i > 0; --i) {
    allocatable[pick(p, kGpuResources)] = quantity(p);
  }
  json annotations = json::object();
  if (p.ConsumeBool()) annotations["gpuscale.io/intent"] = p.ConsumeRandomLengthString(64);
  if (p.ConsumeBool()) annotations["gpuscale.io/backoff-until"] = "2026-11-22T02:00:00Z";
  return {{"kind", "Node"},
          {"metadata",
           {{"name", pick(p, kNodes)}, {"labels", labels(p, l)}, {"annotations", annotations}}},
          {"spec", {{"unschedulable", p.ConsumeBool()}}},
          {"status", {{"allocatable", allocatable}}}};
}

json container(FuzzedDataProvider& p, const std::string& name) {
  json requests = json::object();
  for (int i = p.ConsumeIntegralInRange<int>(0, 2); i > 0; --i) {
    requests[pick(p, kGpuResources)] = quantity(p);
  }
  json c{{"name", name}, {"resources", {{"requests", requests}, {"limits", requests}}}};
  if (p.ConsumeBool()) c["resources"]["claims"] = {{{"name", "gpu"}}};
  return c;
}

json pod(FuzzedDataProvider& p, int index) {
  json spec{{"containers", {container(p, "app")}}};
  if (p.ConsumeBool()) {
    json init = container(p, "init");
    if (p.ConsumeBool()) init["restartPolicy"] = "Always";
    spec["initContainers"] = {init};
  }
  if (p.ConsumeBool()) spec["nodeName"] = pick(p, kNodes);
  if (p.ConsumeBool()) {
    spec["resourceClaims"] = {{{"name", "gpu"}}};
    if (p.ConsumeBool()) spec["resourceClaims"][0]["resourceClaimTemplateName"] = "t";
  }
  // What the Priority admission plugin resolved: any int32 (system classes go up to 2000001000).
  if (p.ConsumeBool()) spec["priority"] = int32(p, std::numeric_limits<std::int32_t>::min());
  json status{{"phase", pick(p, {"Pending", "Running", "Succeeded", "Failed", "Unknown"})}};
  if (p.ConsumeBool()) {
    status["conditions"] = {
        {{"type", "PodScheduled"},
         {"status", "False"},
         {"reason", "Unschedulable"},
         {"message", "0/3 nodes are available: 3 Insufficient " + pick(p, kGpuResources) + "."}},
        {{"type", "Ready"}, {"status", pick(p, {"True", "False"})}}};
  }
  if (p.ConsumeBool()) status["startTime"] = "2026-11-22T00:59:50Z";
  if (p.ConsumeBool()) {
    status["resourceClaimStatuses"] = {
        {{"name", "gpu"}, {"resourceClaimName", pick(p, {"c0", "c1", "c2"})}}};
  }
  return {{"kind", "Pod"},
          {"metadata",
           {{"name", "p" + std::to_string(index)},
            {"namespace", pick(p, kNamespaces)},
            {"labels", labels(p, {{"app", pick(p, kApps)}})}}},
          {"spec", spec},
          {"status", status}};
}

json workload(FuzzedDataProvider& p) {
  json podSpec{{"containers", {container(p, "app")}}};
  if (p.ConsumeBool()) podSpec["nodeSelector"] = {{"nvidia.com/gpu.product", "Tesla-T4"}};
  // Never read: a template's class name is not what admission resolved.
  if (p.ConsumeBool()) podSpec["priorityClassName"] = pick(p, {"gold", "missing"});
  if (p.ConsumeBool()) {
    podSpec["resourceClaims"] = {
        {{"name", "gpu"}, {"resourceClaimTemplateName", pick(p, {"t", "missing"})}}};
  }
  const std::string app = pick(p, kApps);
  const json tmpl{{"metadata", {{"labels", {{"app", app}}}}}, {"spec", podSpec}};
  const json spec{{"replicas", int32(p, 0)},
                  {"selector", {{"matchLabels", {{"app", app}}}}},
                  {"template", tmpl}};
  return {{"kind", pick(p, {"Deployment", "StatefulSet", "ReplicaSet"})},
          {"metadata", {{"name", app}, {"namespace", pick(p, kNamespaces)}}},
          {"spec", spec}};
}

// A metric target that validation admits for `type`: `type` is any of the three, and the fields
// set are those the source requires (not necessarily the ones `type` names).
json target(FuzzedDataProvider& p, const std::string& type) {
  json t{{"type", pick(p, {"Utilization", "Value", "AverageValue"})}};
  const bool utilizationOrAverage = p.ConsumeBool();
  if (type == "Resource" || type == "ContainerResource") {
    if (utilizationOrAverage) {
      t["averageUtilization"] = int32(p, 1);
    } else {
      t["averageValue"] = positiveQuantity(p);
    }
  } else if (type == "Pods") {
    t["averageValue"] = positiveQuantity(p);
  } else if (type == "External") {
    t[utilizationOrAverage ? "value" : "averageValue"] = positiveQuantity(p);
  } else {  // Object: value, averageValue or both
    const int which = p.ConsumeIntegralInRange<int>(0, 2);
    if (which != 1) t["value"] = positiveQuantity(p);
    if (which != 0) t["averageValue"] = positiveQuantity(p);
  }
  return t;
}

// What the HPA controller reports: any of the three, each a quantity it wrote.
json current(FuzzedDataProvider& p) {
  json c = json::object();
  if (p.ConsumeBool()) c["averageUtilization"] = int32(p, 0);
  if (p.ConsumeBool()) c["averageValue"] = quantity(p, true);
  if (p.ConsumeBool()) c["value"] = quantity(p, true);
  return c;
}

// The metric spec and, maybe, its status entry.
std::pair<json, json> metric(FuzzedDataProvider& p) {
  const std::string type = pick(p, {"Resource", "ContainerResource", "Pods", "Object", "External"});
  json source{{"metric", {{"name", "m"}}}};
  std::string field = "pods";
  if (type == "Resource" || type == "ContainerResource") {
    source = {{"name", pick(p, {"cpu", "memory"})}};
    field = type == "Resource" ? "resource" : "containerResource";
    if (type == "ContainerResource") source["container"] = "app";
  } else if (type == "Object") {
    field = "object";
    source["describedObject"] = {{"apiVersion", "v1"}, {"kind", "Service"}, {"name", "s"}};
  } else if (type == "External") {
    field = "external";
  }
  json status = source;
  source["target"] = target(p, type);
  status["current"] = current(p);
  return {{{"type", type}, {field, source}}, {{"type", type}, {field, status}}};
}

json hpa(FuzzedDataProvider& p, int index) {
  const std::int32_t min = int32(p, 1);
  json spec{{"scaleTargetRef",
             {{"apiVersion", "apps/v1"},
              {"kind",
               pick(p, {"Deployment", "StatefulSet", "ReplicaSet", "LeaderWorkerSet", "Rollout"})},
              {"name", pick(p, kApps)}}},
            {"minReplicas", min},
            {"maxReplicas",
             p.ConsumeBool() ? kInt32Max : p.ConsumeIntegralInRange<std::int32_t>(min, kInt32Max)},
            {"metrics", json::array()}};
  json currentMetrics = json::array();
  for (int i = p.ConsumeIntegralInRange<int>(0, 4); i > 0; --i) {
    auto [m, c] = metric(p);
    spec["metrics"].push_back(m);
    if (p.ConsumeBool()) currentMetrics.push_back(c);
  }
  if (p.ConsumeBool()) spec["behavior"] = {{"scaleUp", {{"tolerance", quantity(p)}}}};
  json item{{"kind", "HorizontalPodAutoscaler"},
            {"metadata",
             {{"name", "h" + std::to_string(index)},
              {"namespace", pick(p, kNamespaces)},
              {"uid", "uid-" + std::to_string(index)},
              {"labels", labels(p, json::object())}}},
            {"spec", spec}};
  if (p.ConsumeBool()) {
    item["metadata"]["annotations"] = {
        {"gpuscale.io/partition-policy", pick(p, {"default", "gold", "none"})}};
  }
  switch (p.ConsumeIntegralInRange<int>(0, 2)) {
    case 0:  // no status yet
      break;
    case 1:  // what a first sync writes: desiredReplicas, currentMetrics null
      item["status"] = {{"desiredReplicas", int32(p, 0)}, {"currentMetrics", nullptr}};
      break;
    default: {
      json status{{"desiredReplicas", int32(p, 0)}, {"currentMetrics", currentMetrics}};
      if (p.ConsumeBool()) status["currentReplicas"] = int32(p, 0);
      json conditions = json::array();
      for (int i = p.ConsumeIntegralInRange<int>(0, 3); i > 0; --i) {
        conditions.push_back({{"type", pick(p, {"AbleToScale", "ScalingActive", "ScalingLimited"})},
                              {"status", pick(p, {"True", "False", "Unknown"})},
                              {"reason", pick(p, {"TooManyReplicas", "ScaleUpLimit",
                                                  "DesiredWithinRange", "ValidMetricFound"})}});
      }
      status["conditions"] = conditions;
      item["status"] = status;
    }
  }
  return item;
}

// A CEL selector: the driver's classes', typical claims', constructs outside the subset, errors at
// evaluation, and arbitrary bytes.
std::string selector(FuzzedDataProvider& p) {
  if (p.ConsumeIntegralInRange<int>(0, 4) == 0) return p.ConsumeRandomLengthString(64);
  return pick(
      p, {"device.driver == 'gpu.nvidia.com' && "
          "device.attributes['gpu.nvidia.com'].type == 'mig'",
          "device.attributes['gpu.nvidia.com'].type == 'gpu'",
          "device.attributes['gpu.nvidia.com'].profile in ['1g.5gb', '3g.20gb']",
          "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('10Gi')) >= 0",
          "device.attributes['gpu.nvidia.com'].uuid == 'MIG-0'",
          "device.attributes['gpu.nvidia.com'].missing",
          "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('1.0.0'))",
          "device.attributes['gpu.nvidia.com'].productName.matches('(')", "cel.bind(x, 1, x == 1)",
          "1 / 0 == 0", "((((true))))"});
}

// One device of the driver (or something like one): type, profile, uuid, memory, maybe counters
// and a taint.
json draDevice(FuzzedDataProvider& p, int index) {
  json attributes{{"type", {{"string", pick(p, {"gpu", "mig", "vfio", ""})}}},
                  {"profile", {{"string", pick(p, {"1g.5gb", "3g.20gb", "7g.40gb", "x"})}}},
                  {"uuid", {{"string", "MIG-" + std::to_string(index)}}},
                  {"driverVersion", {{"version", pick(p, {"550.90.7", "1.0.0-rc.1", "x"})}}}};
  if (p.ConsumeBool()) attributes["resource.kubernetes.io/numaNode"] = {{"ints", {0, 1}}};
  json d{{"name", "d" + std::to_string(index)},
         {"attributes", attributes},
         {"capacity", {{"memory", {{"value", quantity(p)}}}}}};
  if (p.ConsumeBool()) {
    const json counters{{"memory-slice-0", {{"value", quantity(p)}}}};
    d["consumesCounters"] =
        json::array({json{{"counterSet", pick(p, {"s", "missing"})}, {"counters", counters}}});
  }
  if (p.ConsumeBool()) d["taints"] = {{{"key", "k"}, {"effect", pick(p, {"None", "NoSchedule"})}}};
  return d;
}

json draObject(FuzzedDataProvider& p, int index) {
  const json meta{{"name", "dra" + std::to_string(index)}, {"namespace", pick(p, kNamespaces)}};
  switch (p.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: {
      json spec{{"driver", pick(p, {"gpu.nvidia.com", "example.com"})},
                {"pool",
                 {{"name", pick(p, kNodes)},
                  {"generation", p.ConsumeIntegralInRange<std::int64_t>(0, 3)},
                  {"resourceSliceCount", p.ConsumeIntegralInRange<std::int64_t>(1, 2)}}}};
      if (p.ConsumeBool()) {
        spec["nodeName"] = spec["pool"]["name"];
      } else {
        spec["allNodes"] = true;
      }
      for (int i = p.ConsumeIntegralInRange<int>(0, 8); i > 0; --i) {
        spec["devices"].push_back(draDevice(p, i));
      }
      if (p.ConsumeBool()) {
        spec["sharedCounters"] = {
            {{"name", "s"}, {"counters", {{"memory-slice-0", {{"value", quantity(p)}}}}}}};
      }
      return {{"kind", "ResourceSlice"}, {"metadata", meta}, {"spec", spec}};
    }
    case 1:
      return {{"kind", "DeviceClass"},
              {"metadata", {{"name", pick(p, {"gpu.nvidia.com", "mig.nvidia.com"})}}},
              {"spec", {{"selectors", {{{"cel", {{"expression", selector(p)}}}}}}}}};
    case 2: {
      json request{{"deviceClassName", pick(p, {"gpu.nvidia.com", "mig.nvidia.com", "nope"})},
                   {"count", p.ConsumeIntegralInRange<std::int64_t>(0, 3)},
                   {"allocationMode", pick(p, {"ExactCount", "All"})}};
      if (p.ConsumeBool()) request["selectors"] = {{{"cel", {{"expression", selector(p)}}}}};
      json r{{"name", "gpu"}};
      if (p.ConsumeBool()) {
        r["exactly"] = request;
      } else {
        request["name"] = "a";
        r["firstAvailable"] = {request};
      }
      return {{"kind", "ResourceClaimTemplate"},
              {"metadata", {{"name", "t"}, {"namespace", meta["namespace"]}}},
              {"spec", {{"spec", {{"devices", {{"requests", {r}}}}}}}}};
    }
    default:
      return {
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", pick(p, {"c0", "c1", "c2"})}, {"namespace", meta["namespace"]}}},
          {"spec", json::object()},
          {"status",
           {{"allocation",
             {{"devices",
               {{"results",
                 {{{"request", "gpu"},
                   {"driver", "gpu.nvidia.com"},
                   {"pool", pick(p, kNodes)},
                   {"device", "d" + std::to_string(p.ConsumeIntegralInRange<int>(0, 8))}}}}}}}},
            {"reservedFor", {{{"resource", "pods"}, {"name", "p1"}}}}}}};
  }
}

constexpr const char* kMigConfigs =
    "version: v1\nmig-configs:\n"
    "  all-disabled:\n    - devices: all\n      mig-enabled: false\n"
    "  all-1g.5gb:\n    - devices: all\n      mig-enabled: true\n      mig-devices:\n"
    "        \"1g.5gb\": 7\n"
    "  all-3g.20gb:\n    - devices: all\n      mig-enabled: true\n      mig-devices:\n"
    "        \"3g.20gb\": 2\n"
    "  all-balanced:\n    - devices: all\n      mig-enabled: true\n      mig-devices:\n"
    "        \"1g.5gb\": 2\n        \"2g.10gb\": 1\n        \"3g.20gb\": 1\n";

constexpr const char* kPolicies[] = {
    "policies:\n- name: default\n  hpaNamespaces: ['*']\n",
    "policies:\n- name: default\n  hpaNamespaces: ['*']\n  migModeChange: {enabled: true}\n"
    "  migGiveBack: restore\n  levers: [migReshape, mps, timeSlicing]\n",
    "policies:\n- {name: default, hpaNamespaces: [default], priority: 5}\n"
    "- {name: gold, hpaNamespaces: ['*'], levers: [timeSlicing], maxReplicas: {hard: "
    "2147483647}}\n",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  json items = json::array();
  int hpas = 0;
  for (int i = 0; i < 24 && p.remaining_bytes() > 0; ++i) {
    switch (p.ConsumeIntegralInRange<int>(0, 8)) {
      case 0:
        items.push_back(node(p));
        break;
      case 1:
      case 2:
        items.push_back(pod(p, i));
        break;
      case 3:
        items.push_back(workload(p));
        break;
      case 4:
      case 5:
        items.push_back(hpa(p, i));
        ++hpas;
        break;
      case 8:
        items.push_back(draObject(p, i));
        break;
      case 6:
        items.push_back({{"kind", "PriorityClass"},
                         {"metadata", {{"name", pick(p, {"gold", "silver"})}}},
                         {"value", p.ConsumeIntegralInRange<std::int32_t>(
                                       std::numeric_limits<std::int32_t>::min(), 1000000000)},
                         {"globalDefault", p.ConsumeBool()}});
        break;
      default:
        if (p.ConsumeBool()) {
          items.push_back(
              {{"kind", "ConfigMap"},
               {"metadata", {{"name", "default-mig-parted-config"}, {"namespace", "gpu-operator"}}},
               {"data", {{"config.yaml", kMigConfigs}}}});
        } else {
          // The reconciler's own records: a raise in flight or a past one, for some HPA.
          gpuscale::reconciler::HpaRecord record;
          const int of = p.ConsumeIntegralInRange<int>(0, 23);
          record.uid = "uid-" + std::to_string(of);
          record.originalMaxReplicas = int32(p, 1);
          if (p.ConsumeBool()) {
            record.intent = gpuscale::reconciler::HpaIntent{
                "plan-1",
                int32(p, 0),
                int32(p, 0),
                {pick(p, kNodes)},
                *gpuscale::core::parseRfc3339("2026-11-22T00:59:00Z")};
          }
          items.push_back(
              {{"kind", "ConfigMap"},
               {"metadata", {{"name", "gpuscale-reconciler-state"}, {"namespace", "gpuscale"}}},
               {"data",
                {{gpuscale::reconciler::hpaRecordKey(pick(p, kNamespaces),
                                                     "h" + std::to_string(of)),
                  gpuscale::reconciler::encodeHpaRecord(record)}}}});
        }
    }
  }
  const json dump{{"kind", "List"}, {"items", items}};

  auto policies = gpuscale::partition::parsePolicies(p.PickValueInArray(kPolicies));
  if (!policies) fail("a fixed policy file did not parse", dump);
  gpuscale::reconciler::PassInputs in;
  in.policies = &*policies;
  in.now = *gpuscale::core::parseRfc3339("2026-11-22T01:00:00Z");
  auto pass = gpuscale::reconciler::runPassOnDump(dump, in, "gpuscale-reconciler-state");
  if (!pass) fail("a list of objects stopped the pass: " + pass.status().message(), dump);
  const auto& snapshot = pass->snapshot;
  for (const auto& s : snapshot.skipped) {
    if (s.reason.empty() || s.message.empty()) fail("an object skipped without a reason", dump);
    if (s.kind == "HorizontalPodAutoscaler") fail("an API-valid HPA skipped: " + s.message, dump);
  }
  if (static_cast<int>(snapshot.hpas.size()) != hpas) fail("an HPA went missing", dump);
  (void)gpuscale::partition::planToJson(pass->plan).dump();
  (void)gpuscale::partition::planToText(pass->plan);
  auto explained = gpuscale::reconciler::explainPass(*pass, *policies, {}, {"", "", in.now});
  if (!explained) fail("explain failed: " + explained.status().message(), dump);
  (void)gpuscale::reconciler::explanationsJson(*explained).dump();
  (void)gpuscale::reconciler::explanationsText(*explained);
  return 0;
}
