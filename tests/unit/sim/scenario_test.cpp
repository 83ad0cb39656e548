#include "gpuscale/sim/scenario.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuscale/sim/operator_config.h"
#include "support/rejected_inputs.h"

namespace gpuscale::sim {
namespace scenario_test {

using gpuscale::testing::expectAllRejected;
using gpuscale::testing::RejectedInput;
using ::testing::HasSubstr;

constexpr const char* kFull = R"(
name: demo
description: two nodes
gpuOperator:
  namespace: ops
  migManager:
    reconfigureSeconds: 2.5
    modeChangeSeconds: 40
    modeChangeReboots: true
    rebootSeconds: 90
    customConfigMap: my-mig
    customConfig: |
      version: v1
      mig-configs:
        two-3g:
          - devices: all
            mig-enabled: true
            mig-devices: {"3g.20gb": 2}
  devicePlugin:
    configMap: plugin-configs
    default: ts-2
    reloadSeconds: 1
    configs:
      ts-2: |
        version: v1
        sharing:
          timeSlicing:
            resources: [{name: nvidia.com/gpu, replicas: 2}]
  dcgmExporter:
    podDelaySeconds: 8
nodes:
- name: a100-0
  product: NVIDIA-A100-SXM4-40GB
  gpus: 2
  memoryMiB: 40960
  migStrategy: mixed
  migConfig: all-1g.5gb
  failures:
  - {reconfiguration: 2, mode: hang}
  - {mode: fail}
- name: a100-1
  product: NVIDIA-A100-SXM4-40GB
  gpus: 2
  memoryMiB: 40960
  migStrategy: mixed
  geometry: ["1g.5gb:7", disabled]
  migManager: {reconfigureSeconds: 12}
- name: t4-0
  product: Tesla-T4
  memoryMiB: 15360
  devicePluginConfig: ts-2
load:
  podSelector: app=triton
  pattern: {kind: ramp, baseRps: 10, peakRps: 110, startSeconds: 10, durationSeconds: 100}
  gpuMillisOnFullGpu: 20
  gpuUtilization: 0.5
  vllm: {promptTokens: 512, outputTokens: 128, prefillShare: 0.2, kvCacheTokens: 4096}
reconciler:
  gpuMapping: dcgm
hpa:
  scaleDown: {percent: 50, periodSeconds: 15, stabilizationWindowSeconds: 0}
workload:
  resource: nvidia.com/gpu
  nodeSelector: {nvidia.com/gpu.product: Tesla-T4-SHARED}
  server: vllm
  args: [--gpu-memory-utilization=0.45, --max-model-len, "4096"]
  scaler: keda
  kind: LeaderWorkerSet
  size: 2
)";

TEST(ScenarioTest, ParsesEveryField) {
  auto s = parseScenario(kFull);
  ASSERT_TRUE(s.ok()) << s.status().toString();
  EXPECT_EQ(s->name, "demo");
  EXPECT_EQ(s->gpuOperator.namespaceName, "ops");
  EXPECT_EQ(s->gpuOperator.reconfigureDelay, std::chrono::milliseconds(2500));
  EXPECT_EQ(s->gpuOperator.modeChange.delay, std::chrono::seconds(40));
  EXPECT_TRUE(s->gpuOperator.modeChange.reboots);
  EXPECT_EQ(s->gpuOperator.modeChange.rebootDelay, std::chrono::seconds(90));
  EXPECT_EQ(s->gpuOperator.devicePluginReload, std::chrono::milliseconds(1000));
  EXPECT_EQ(s->gpuOperator.dcgmPodDelay, std::chrono::milliseconds(8000));
  EXPECT_EQ(s->gpuOperator.customMigConfigMap, "my-mig");
  ASSERT_TRUE(s->gpuOperator.customMigConfig);
  EXPECT_TRUE(s->gpuOperator.customMigConfig->configs.contains("two-3g"));
  EXPECT_EQ(s->gpuOperator.devicePluginDefault, "ts-2");
  ASSERT_EQ(s->nodes.size(), 3u);
  const auto& a = s->nodes[0];
  EXPECT_TRUE(a.migCapable);
  EXPECT_EQ(a.migStrategy, partition::MigStrategy::kMixed);
  EXPECT_EQ(a.gpus, 2);
  ASSERT_EQ(a.failures.size(), 2u);
  EXPECT_EQ(a.failureFor(1)->mode, FailureMode::kFail);
  EXPECT_EQ(a.failureFor(2)->mode, FailureMode::kHang);
  EXPECT_TRUE(a.migManagerPresent);
  EXPECT_FALSE(a.reconfigureDelay);
  // Explicit geometry becomes a named per-node config in the custom ConfigMap.
  const auto& b = s->nodes[1];
  EXPECT_EQ(b.reconfigureDelay, std::chrono::seconds(12));
  EXPECT_EQ(b.migConfig, "a100-1-initial");
  ASSERT_EQ(b.geometry.size(), 2u);
  EXPECT_FALSE(b.geometry[1].migEnabled);
  EXPECT_TRUE(s->gpuOperator.customMigConfig->configs.contains("a100-1-initial"));
  const auto& t4 = s->nodes[2];
  EXPECT_FALSE(t4.migCapable);
  EXPECT_EQ(t4.migStrategy, partition::MigStrategy::kNone);
  EXPECT_EQ(t4.devicePluginConfig, "ts-2");
  ASSERT_TRUE(s->load);
  EXPECT_EQ(s->load->pattern.kind, LoadPatternKind::kRamp);
  EXPECT_DOUBLE_EQ(s->load->gpuUtilization, 0.5);
  EXPECT_EQ(s->reconcilerGpuMapping, "dcgm");
  auto plain = parseScenario("name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]");
  ASSERT_TRUE(plain.ok()) << plain.status().toString();
  EXPECT_EQ(plain->reconcilerGpuMapping, "node") << "the node-level rule unless asked";
  EXPECT_TRUE(s->hpaScaleDown.percent);
  EXPECT_EQ(s->hpaScaleDown.value, 50);
  EXPECT_EQ(s->hpaScaleDown.periodSeconds, 15);
  EXPECT_EQ(s->hpaScaleDown.stabilizationWindowSeconds, 0);
  EXPECT_FALSE(plain->hpaScaleDown.percent) << "one pod at a time unless asked";
  EXPECT_EQ(plain->hpaScaleDown.value, 1);
  EXPECT_EQ(plain->hpaScaleDown.stabilizationWindowSeconds, 30);
  EXPECT_EQ(s->workloadResource, "nvidia.com/gpu");
  EXPECT_EQ(s->workloadNodeSelector,
            (std::map<std::string, std::string>{{"nvidia.com/gpu.product", "Tesla-T4-SHARED"}}));
  EXPECT_TRUE(plain->workloadResource.empty()) << "run.sh picks the resource from the strategy";
  EXPECT_TRUE(plain->workloadNodeSelector.empty());
  EXPECT_EQ(s->workloadServer, InferenceServer::kVllm);
  EXPECT_EQ(s->workloadArgs,
            (std::vector<std::string>{"--gpu-memory-utilization=0.45", "--max-model-len", "4096"}));
  EXPECT_EQ(plain->workloadServer, InferenceServer::kTriton) << "Triton unless asked";
  EXPECT_TRUE(plain->workloadArgs.empty());
  EXPECT_EQ(s->workloadScaler, "keda");
  EXPECT_EQ(s->workloadKind, "LeaderWorkerSet");
  EXPECT_EQ(s->workloadSize, 2);
  EXPECT_EQ(plain->workloadScaler, "hpa") << "a plain HPA unless asked";
  EXPECT_EQ(plain->workloadKind, "Deployment");
  EXPECT_EQ(plain->workloadSize, 1);
  EXPECT_TRUE(plain->workloadClaimDeviceClass.empty()) << "device-plugin requests unless asked";
  EXPECT_EQ(s->load->vllm.promptTokens, 512);
  EXPECT_EQ(s->load->vllm.outputTokens, 128);
  EXPECT_EQ(s->load->vllm.prefillShare, 0.2);
  EXPECT_EQ(s->load->vllm.kvCacheTokens, 4096);
}

TEST(ScenarioTest, ParsesServices) {
  auto s = parseScenario(R"(
name: two
nodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]
services:
- name: high
  priority: 100
  sloSeconds: 0.5
  load:
    podSelector: app=high
    pattern: {kind: spike, baseRps: 1, peakRps: 10, startSeconds: 60, durationSeconds: 120}
- name: low
  load: {namespace: batch, podSelector: app=low, model: resnet}
)");
  ASSERT_TRUE(s.ok()) << s.status().toString();
  EXPECT_FALSE(s->load) << "services do not fill the single load";
  ASSERT_EQ(s->services.size(), 2u);
  const ServiceSpec& high = s->services[0];
  EXPECT_EQ(high.name, "high");
  EXPECT_EQ(high.priority, 100);
  EXPECT_EQ(high.sloMicros, 500000);
  EXPECT_EQ(high.load.podSelector, "app=high");
  EXPECT_EQ(high.load.namespaceName, "default");
  EXPECT_EQ(high.load.pattern.kind, LoadPatternKind::kSpike);
  const ServiceSpec& low = s->services[1];
  EXPECT_EQ(low.priority, 0) << "priority defaults to 0";
  EXPECT_FALSE(low.sloMicros) << "no SLO: the harness's default";
  EXPECT_EQ(low.load.namespaceName, "batch");
  EXPECT_EQ(low.load.model, "resnet");
  ASSERT_EQ(s->loadServices().size(), 2u);
  EXPECT_EQ(s->loadServices()[1].name, "low");
}

struct LoadServicesCase {
  const char* what;
  const char* yaml;
  std::vector<std::string> names;  // of loadServices(), in order
};

TEST(ScenarioTest, LoadServicesOfEitherForm) {
  const LoadServicesCase cases[] = {
      {"no load: nothing to drive",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]",
       {}},
      {"the single load is one unnamed service",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nload: {podSelector: app=t}",
       {""}},
      {"services in file order",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: b, load: "
       "{podSelector: app=b}}, {name: a, load: {podSelector: app=a}}]",
       {"b", "a"}},
  };
  for (const auto& c : cases) {
    auto s = parseScenario(c.yaml);
    ASSERT_TRUE(s.ok()) << c.what << ": " << s.status().toString();
    std::vector<std::string> names;
    for (const ServiceSpec& service : s->loadServices()) names.push_back(service.name);
    EXPECT_EQ(names, c.names) << c.what;
  }
  auto single = parseScenario(
      "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nload: {podSelector: app=t}");
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->loadServices()[0].load.podSelector, "app=t");
  EXPECT_EQ(single->loadServices()[0].priority, 0);
}

struct ScaleUpCase {
  const char* what;
  const char* hpa;  // the scenario's `hpa:` value
  bool given;
  std::optional<int> percent, pods;
  int periodSeconds, stabilizationWindowSeconds;
};

TEST(ScenarioTest, HpaScaleUp) {
  const ScaleUpCase cases[] = {
      {"no hpa: the controller's default, not written", "{}", false, 100, 4, 15, 0},
      {"scale-down only leaves scale-up alone", "{scaleDown: {pods: 2}}", false, 100, 4, 15, 0},
      {"both policies", "{scaleUp: {percent: 400, pods: 28, periodSeconds: 15}}", true, 400, 28, 15,
       0},
      {"percent only: no pods policy", "{scaleUp: {percent: 900}}", true, 900, std::nullopt, 15, 0},
      {"pods only: no percent policy", "{scaleUp: {pods: 10, periodSeconds: 5}}", true,
       std::nullopt, 10, 5, 0},
      {"window alone keeps the default policies", "{scaleUp: {stabilizationWindowSeconds: 30}}",
       true, 100, 4, 15, 30},
  };
  for (const auto& c : cases) {
    auto s = parseScenario(
        std::string("name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nhpa: ") + c.hpa);
    ASSERT_TRUE(s.ok()) << c.what << ": " << s.status().toString();
    const HarnessScaleUp& up = s->hpaScaleUp;
    EXPECT_EQ(up.given, c.given) << c.what;
    EXPECT_EQ(up.percent, c.percent) << c.what;
    EXPECT_EQ(up.pods, c.pods) << c.what;
    EXPECT_EQ(up.periodSeconds, c.periodSeconds) << c.what;
    EXPECT_EQ(up.stabilizationWindowSeconds, c.stabilizationWindowSeconds) << c.what;
  }
}

TEST(ScenarioTest, ParsesAWorkloadOfClaims) {
  auto s = parseScenario(
      "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {claim: "
      "{deviceClass: mig.nvidia.com, selector: \"device.attributes['gpu.nvidia.com'].profile == "
      "'1g.5gb'\"}}");
  ASSERT_TRUE(s.ok()) << s.status().toString();
  EXPECT_EQ(s->workloadClaimDeviceClass, "mig.nvidia.com");
  EXPECT_EQ(s->workloadClaimSelector, "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'");
  // Per service: one service of claims beside one of device-plugin requests.
  auto mixed = parseScenario(
      "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices:\n"
      "- {name: plugin, load: {podSelector: app=plugin}}\n"
      "- {name: claims, load: {podSelector: app=claims}, workload: {claim: {deviceClass: "
      "gpu.nvidia.com}}}");
  ASSERT_TRUE(mixed.ok()) << mixed.status().toString();
  ASSERT_EQ(mixed->services.size(), 2u);
  EXPECT_TRUE(mixed->services[0].claimDeviceClass.empty());
  EXPECT_EQ(mixed->services[1].claimDeviceClass, "gpu.nvidia.com");
  EXPECT_TRUE(mixed->services[1].claimSelector.empty());
  EXPECT_TRUE(mixed->workloadClaimDeviceClass.empty());
}

TEST(ScenarioTest, WorkloadScalers) {
  for (const std::string scaler : {"hpa", "keda", "planner"}) {
    auto s = parseScenario(
        "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\n"
        "workload: {scaler: " +
        scaler + "}");
    ASSERT_TRUE(s.ok()) << scaler << ": " << s.status().toString();
    EXPECT_EQ(s->workloadScaler, scaler);
  }
}

TEST(ScenarioTest, RejectsBadInput) {
  const RejectedInput<> cases[] = {
      {"no name", "nodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]", "needs a name"},
      {"no nodes", "name: x", "needs nodes"},
      {"workload resource outside nvidia.com/",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {resource: cpu}",
       "nvidia.com/ resource"},
      {"workload claim without a class",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {claim: {selector: "
       "'true'}}",
       "workload.claim needs a deviceClass"},
      {"service claim without a class",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: s, load: "
       "{podSelector: app=s}, workload: {claim: {selector: 'true'}}}]",
       "a service's workload.claim needs a deviceClass"},
      {"unknown service workload key",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: s, load: "
       "{podSelector: app=s}, workload: {resource: nvidia.com/gpu}}]",
       "unknown field \"resource\""},
      {"workload claim and resource",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {resource: "
       "nvidia.com/gpu, claim: {deviceClass: gpu.nvidia.com}}",
       "exclude each other"},
      {"unknown workload key",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {image: x}",
       "unknown field \"image\""},
      {"unknown server",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {server: tgi}",
       "unknown server \"tgi\" (triton, vllm)"},
      {"unknown scaler",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {scaler: vpa}",
       "workload.scaler is hpa, keda or planner"},
      {"unknown kind",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {kind: Job}",
       "workload.kind is Deployment or LeaderWorkerSet"},
      {"groups of a Deployment",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {size: 2}",
       "workload.size is 1, or more for a LeaderWorkerSet"},
      {"empty groups",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {kind: "
       "LeaderWorkerSet, size: 0}",
       "workload.size is 1, or more for a LeaderWorkerSet"},
      {"args not a list",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {args: --x}",
       "workload.args must be a list of strings"},
      {"args not strings",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nworkload: {args: [{a: "
       "b}]}",
       "workload.args must be a list of strings"},
      {"unknown vllm key",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nload: {podSelector: a=b, "
       "vllm: {tokens: 1}}",
       "unknown field \"tokens\""},
      {"prefill share above 1",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nload: {podSelector: a=b, "
       "vllm: {prefillShare: 2}}",
       "prefillShare is a share in [0, 1]"},
      {"no KV cache",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nload: {podSelector: a=b, "
       "vllm: {kvCacheTokens: 0}}",
       "kvCacheTokens must be > 0"},
      {"unknown top-level key", "name: x\nnodez: []", "unknown field \"nodez\""},
      {"unknown node key", "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1, gpu: 2}]",
       "unknown field \"gpu\""},
      {"duplicate node",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}, {name: a, product: Tesla-T4, "
       "memoryMiB: 1}]",
       "appears twice"},
      {"bad node name", "name: x\nnodes: [{name: A_B, product: Tesla-T4, memoryMiB: 1}]",
       "not valid"},
      {"MIG on a T4",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1, migCapable: true}]",
       "no catalog model"},
      {"bad strategy",
       "name: x\nnodes: [{name: a, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migStrategy: "
       "both}]",
       "unknown migStrategy"},
      {"geometry that does not fit",
       "name: x\nnodes: [{name: a, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, geometry: "
       "['1g.5gb:8']}]",
       "does not fit"},
      {"geometry count differs from gpus",
       "name: x\nnodes: [{name: a, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, gpus: 2, "
       "geometry: ['1g.5gb:7']}]",
       "the node has 2"},
      {"both migConfig and geometry",
       "name: x\nnodes: [{name: a, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migConfig: "
       "all-1g.5gb, geometry: ['1g.5gb:7']}]",
       "not both"},
      {"failure count from 1",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1, failures: [{reconfiguration: "
       "0}]}]",
       "counts from 1"},
      {"migManager on a node without MIG",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1, migManager: {present: false}}]",
       "not MIG-capable"},
      {"stateLabel with a mig-manager present",
       "name: x\nnodes: [{name: a, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migManager: "
       "{stateLabel: empty}}]",
       "present: false"},
      {"a slow mig-manager that is absent",
       "name: x\nnodes: [{name: a, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migManager: "
       "{present: false, reconfigureSeconds: 3}}]",
       "needs a mig-manager"},
      {"unknown failure mode",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1, failures: [{mode: explode}]}]",
       "unknown failure mode"},
      {"device-plugin config that does not parse",
       "name: x\ngpuOperator: {devicePlugin: {configs: {bad: 'version: v2'}}}\nnodes: [{name: a, "
       "product: Tesla-T4, memoryMiB: 1}]",
       "config \"bad\""},
      {"node selects a missing device-plugin config",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1, devicePluginConfig: ts-9}]",
       "not in gpuOperator.devicePlugin.configs"},
      {"negative delay",
       "name: x\ngpuOperator: {migManager: {reconfigureSeconds: -1}}\nnodes: [{name: a, product: "
       "Tesla-T4, memoryMiB: 1}]",
       ">= 0"},
      {"negative reboot delay",
       "name: x\ngpuOperator: {migManager: {rebootSeconds: -1}}\nnodes: [{name: a, product: "
       "Tesla-T4, memoryMiB: 1}]",
       ">= 0"},
      {"utilisation above 1",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nload: {podSelector: app=t, "
       "gpuUtilization: 2}",
       "share in (0, 1]"},
      {"utilisation 0 (a pod that never serves)",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nload: {podSelector: app=t, "
       "gpuUtilization: 0}",
       "share in (0, 1]"},
      {"ramp without duration",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nload: {podSelector: app=t, "
       "pattern: {kind: ramp}}",
       "durationSeconds > 0"},
      {"unknown GPU mapping",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nreconciler: {gpuMapping: "
       "nvml}",
       "node or dcgm"},
      {"unknown reconciler key",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nreconciler: {mapping: dcgm}",
       "unknown field \"mapping\""},
      {"scale-down by pods and percent",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nhpa: {scaleDown: {pods: 2, "
       "percent: 50}}",
       "not both"},
      {"scale-down percent above 100",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nhpa: {scaleDown: {percent: "
       "150}}",
       "[1, 100]"},
      {"unknown hpa key",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nhpa: {scaleOut: {pods: 1}}",
       "unknown field \"scaleOut\""},
      {"scale-up percent 0",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nhpa: {scaleUp: {percent: "
       "0}}",
       "[1, 10000]"},
      {"scale-up pods above the bound",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nhpa: {scaleUp: {pods: "
       "1001}}",
       "[1, 1000]"},
      {"scale-up negative window",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nhpa: {scaleUp: "
       "{stabilizationWindowSeconds: -1}}",
       "[0, 3600]"},
      {"unknown scale-up key",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nhpa: {scaleUp: "
       "{selectPolicy: "
       "Min}}",
       "unknown field \"selectPolicy\""},
      {"load and services",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nload: {podSelector: app=t}\n"
       "services: [{name: s, load: {podSelector: app=s}}]",
       "not both"},
      {"empty services",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: []",
       "non-empty list"},
      {"service without a name",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{load: "
       "{podSelector: app=s}}]",
       "not a DNS label"},
      {"service name with a dot",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: a.b, load: "
       "{podSelector: app=s}}]",
       "not a DNS label"},
      {"duplicate service",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: s, load: "
       "{podSelector: app=s}}, {name: s, load: {podSelector: app=t}}]",
       "appears twice"},
      {"service without a load",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: s}]",
       "needs a load"},
      {"service load without a selector",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: s, load: "
       "{model: m}}]",
       "needs a podSelector"},
      {"two services with one selector",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: s, load: "
       "{podSelector: app=s}}, {name: t, load: {podSelector: app=s}}]",
       "already selects"},
      {"zero SLO",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: s, "
       "sloSeconds: 0, load: {podSelector: app=s}}]",
       "sloSeconds must be > 0"},
      {"priority above PriorityClass's bound",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: s, "
       "priority: 2000000000, load: {podSelector: app=s}}]",
       "<= 1000000000"},
      {"unknown service key",
       "name: x\nnodes: [{name: a, product: Tesla-T4, memoryMiB: 1}]\nservices: [{name: s, slo: "
       "1, load: {podSelector: app=s}}]",
       "unknown field \"slo\""},
      {"YAML syntax error", "name: [x", "line"},
  };
  expectAllRejected(cases, parseScenario);
}

TEST(ScenarioTest, ErrorsNameTheLine) {
  auto s =
      parseScenario("name: x\nnodes:\n- name: a\n  product: Tesla-T4\n  memoryMiB: 1\n  gpus: 0\n");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("line 6"));
}

struct RateCase {
  const char* what;
  LoadPattern pattern;
  double t;
  double rps;
};

TEST(ScenarioTest, LoadPatternRates) {
  const LoadPattern ramp{LoadPatternKind::kRamp, 10, 110, 10, 100};
  const LoadPattern spike{LoadPatternKind::kSpike, 5, 50, 20, 10};
  const LoadPattern diurnal{LoadPatternKind::kDiurnal, 100, 150, 0, 400};
  const RateCase cases[] = {
      {"constant ignores time", {LoadPatternKind::kConstant, 7, 0, 0, 0}, 1e6, 7},
      {"ramp before start", ramp, 0, 10},
      {"ramp half way", ramp, 60, 60},
      {"ramp after end holds the peak", ramp, 500, 110},
      {"spike before", spike, 19.9, 5},
      {"spike during", spike, 20, 50},
      {"spike after", spike, 30, 5},
      {"diurnal crest a quarter period in", diurnal, 100, 150},
      {"diurnal trough three quarters in", diurnal, 300, 50},
  };
  for (const auto& c : cases) EXPECT_NEAR(c.pattern.rateAt(c.t), c.rps, 1e-9) << c.what;
}

// Every shipped scenario parses and its nodes' initial MIG configs resolve in the operator's
// ConfigMaps (as the emulator requires at start).
TEST(ScenarioTest, ShippedScenariosLoad) {
  const char* root = std::getenv("GPUSCALE_SOURCE_DIR");
  ASSERT_NE(root, nullptr) << "run through ctest";
  int seen = 0;
  for (const auto& dir : {"bench/scenario", "tests/e2e/sim"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(std::filesystem::path(root) / dir)) {
      if (entry.path().extension() != ".yaml") continue;
      ++seen;
      auto s = loadScenarioFile(entry.path().string());
      ASSERT_TRUE(s.ok()) << s.status().toString();
      std::vector<partition::MigPartedConfig> configs = {defaultMigPartedConfig()};
      if (s->gpuOperator.customMigConfig)
        configs.insert(configs.begin(), *s->gpuOperator.customMigConfig);
      for (const auto& node : s->nodes) {
        if (node.migConfig.empty()) continue;
        EXPECT_TRUE(resolveNodeMigConfig(configs, node, node.migConfig,
                                         std::vector<partition::MigGpuSetting>(node.gpus)))
            << entry.path() << ": " << node.name;
      }
    }
  }
  EXPECT_GE(seen, 5);
}

}  // namespace scenario_test
}  // namespace gpuscale::sim
