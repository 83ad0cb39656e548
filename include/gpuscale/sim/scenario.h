// Scenario: what gpuscale-sim emulates — the GPU Operator's settings (namespaces, ConfigMaps,
// mig-manager timing), the GPU nodes with their initial MIG and sharing state, injected mig-manager
// failures, and the inference load (parsed and validated, driven by the load model).
//
// The file format is YAML with camelCase keys, documented with examples in docs/simulator.md.
// Unknown keys are errors (a typo must not silently become a default). Errors are Status::invalid
// values naming the line and column.
//
// Thread safety: values; parseScenario is a pure function of its input text.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_parted_config.h"

namespace gpuscale::sim {

// How an injected mig-manager failure shows.
enum class FailureMode {
  kFail,    // state `failed` after the delay; operands come back on the old geometry
  kHang,    // state stays `pending` and the device plugin stays paused
  kIgnore,  // no reaction at all: the state label never changes
  // after the delay the state becomes `rebooting` and stays so: a node that never comes back from
  // the reboot a MIG mode change asked for (operands stay paused)
  kHangRebooting,
};
std::string_view failureModeName(FailureMode mode);

struct InjectedFailure {
  // 1-based count of the node's reconfigurations (label changes that need a rebuild);
  // nullopt = every one.
  std::optional<int> reconfiguration;
  FailureMode mode = FailureMode::kFail;
  bool appliesTo(int reconfigurationNumber) const {
    return !reconfiguration || *reconfiguration == reconfigurationNumber;
  }
};

// `dra`: NVIDIA's GPU DRA driver publishes the node's GPUs as ResourceSlices (dra_devices.h)
// instead of the device plugin advertising extended resources. The GPU facts NVML would report are
// taken from the product unless given.
struct DraSpec {
  // The driver's DynamicMIG feature gate: every possible MIG placement is published as a device
  // consuming shared counters of its GPU, and the instance is created when a claim is prepared.
  // Off: the MIG devices mig-manager created are published (static MIG).
  bool dynamicMig = false;
  std::string productName;            // NVML name; default: the product with its first '-' a space
  std::string architecture;           // default from the product (A100: Ampere, H100: Hopper, ...)
  std::string cudaComputeCapability;  // default from the product ("8.0" for A100, ...)
  std::string brand = "Nvidia";
  std::string driverVersion = "580.95.5";
  std::string cudaDriverVersion = "13.0";
};

struct GpuNodeSpec {
  std::string name;
  std::string product;  // nvidia.com/gpu.product of the whole GPU, e.g. "NVIDIA-A100-SXM4-40GB"
  int gpus = 1;         // physical GPUs
  std::int64_t memoryMiB = 0;
  bool migCapable = false;  // default: true when the catalog knows the product's model
  partition::MigStrategy migStrategy = partition::MigStrategy::kNone;
  // The initial `nvidia.com/mig.config` label; resolved in the mig-parted ConfigMaps. Empty with
  // `geometry` set: a per-node config `<node>-initial` is generated into the custom ConfigMap.
  std::string migConfig;
  std::vector<partition::MigGpuSetting> geometry;  // per GPU, when given explicitly
  std::string devicePluginConfig;                  // initial `nvidia.com/device-plugin.config`
  std::map<std::string, std::string> labels;       // extra node labels
  std::string cpu = "32";
  std::string memory = "256Gi";
  std::string pods = "110";
  std::vector<InjectedFailure> failures;
  std::optional<DraSpec> dra;  // set: GPUs published through DRA, no device plugin
  // This node's mig-manager (`migManager:` of a MIG-capable node). `present: false`: none runs
  // there (the GPU Operator's migManager disabled for the node, or a platform that fixes MIG
  // itself): no nvidia.com/mig.config.state label (`stateLabel: empty` writes it empty), and
  // nvidia.com/mig.config is never acted on. `reconfigureSeconds`: this node's runs take that long
  // (a slow mig-manager); nullopt: gpuOperator.migManager's.
  bool migManagerPresent = true;
  bool emptyMigState = false;
  std::optional<std::chrono::milliseconds> reconfigureDelay;

  // The failure injected into reconfiguration number `n` (1-based), if any.
  const InjectedFailure* failureFor(int n) const;
};

// How mig-manager's mode phase goes on this platform: a config that switches some GPU's MIG mode
// makes mig-parted clear every MIG-enabled GPU the config selects and reset every GPU of the node
// (one pending change is enough), which NVML refuses while any of them is in use; under
// hypervisor pass-through and on some cloud VMs the reset is not possible at all and the node
// must reboot (mig-manager with WITH_REBOOT=true sets the state `rebooting` and reboots it).
struct MigModeChangeSpec {
  // `migManager.modeChangeSeconds`: pending -> reset done (operands stopped, host GPU clients
  // stopped, a 30 s settle, the reset), longer than a geometry change.
  std::chrono::milliseconds delay{45000};
  // `migManager.modeChangeReboots`: the platform needs a node reboot for a mode change.
  bool reboots = false;
  // `migManager.rebootSeconds`: rebooting -> success (the node is back, the config applied).
  std::chrono::milliseconds rebootDelay{180000};
};

struct OperatorSpec {
  std::string namespaceName = "gpu-operator";
  // mig-manager: the GPU Operator's default ConfigMap (generated from the partition catalog) and an
  // optional custom one (ClusterPolicy migManager.config.name), read first.
  std::string defaultMigConfigMap = "default-mig-parted-config";
  std::string customMigConfigMap;                             // "" = none
  std::optional<partition::MigPartedConfig> customMigConfig;  // its `config.yaml`
  std::chrono::milliseconds reconfigureDelay{5000};           // pending -> success/failed
  MigModeChangeSpec modeChange;  // a config that switches MIG mode on some GPU
  // Device plugin: ClusterPolicy devicePlugin.config {name, default} and the ConfigMap's keys.
  std::string devicePluginConfigMap = "device-plugin-config";
  std::string devicePluginDefault;                         // "" = no sharing unless labelled
  std::map<std::string, std::string> devicePluginConfigs;  // key -> config file text (validated)
  std::chrono::milliseconds devicePluginReload{0};         // label change -> new allocatable
  // dcgm-exporter: how long after a pod gets its device the series name it (dcgm_pod_delay.h).
  std::chrono::milliseconds dcgmPodDelay{0};
  // `configMapSyncSeconds`: how long after a ConfigMap changes mig-manager and the device plugin
  // see it (the kubelet's refresh of mounted ConfigMap volumes, about a minute on real nodes).
  std::chrono::milliseconds configMapSync{0};
};

// The inference load (per Running pod of the Deployment). Parsed and validated here.
enum class LoadPatternKind { kConstant, kRamp, kSpike, kDiurnal };
std::string_view loadPatternName(LoadPatternKind kind);

struct LoadPattern {
  LoadPatternKind kind = LoadPatternKind::kConstant;
  double baseRps = 0;          // constant level; ramp start; level outside a spike; diurnal mean
  double peakRps = 0;          // ramp end; spike level; diurnal mean + amplitude
  double startSeconds = 0;     // ramp/spike start
  double durationSeconds = 0;  // ramp length; spike length; diurnal period
  // Requests per second offered to the whole Deployment at `t` seconds after the start.
  double rateAt(double t) const;
};

// What a vLLM pod's requests look like (vllm_exposition.h's token counters, time to first token
// and KV-cache gauge). The service time is the load model's; these split it and count tokens.
struct VllmRequestShape {
  double promptTokens = 256;  // per request (prefill)
  double outputTokens = 64;   // generated per request
  // Share of a request's GPU work done before its first token (prefill); the rest is decode, one
  // token after another.
  double prefillShare = 0.1;
  // KV-cache capacity of one pod in tokens: a running request holds its prompt and the tokens
  // generated so far.
  double kvCacheTokens = 16384;
};

struct LoadSpec {
  std::string namespaceName = "default";
  std::string podSelector;  // label selector of the inference pods, e.g. "app=triton"
  std::string model = "simple";
  LoadPattern pattern;
  // Per request: GPU work on a whole GPU and the non-GPU part (pre/post-processing, network).
  double gpuMillisOnFullGpu = 0;
  double cpuMillis = 0;
  // Share of its partition one pod keeps busy (an explicit utilisation parameter).
  double gpuUtilization = 1.0;
  // Context-switch cost of time-slicing: a device with more than one busy pod serves 1 / (1 + o)
  // of its capacity (inference_load_model.h).
  double timeSlicingOverhead = 0.15;
  // `vllm`: the request shape a vLLM exposition reports (a scenario whose workload.server is
  // vllm; unused for Triton).
  VllmRequestShape vllm;
};

// One service of a multi-service scenario (`services:`): its own Deployment, HPA and load. The
// harness (bench/scenario/run.sh) names the Deployment and the HPA after the service, gives the HPA
// the service's SLO (its target is a quarter of it) and gives the service's priority to the policy
// the HPA uses and to the PriorityClass of its pods. The emulator only uses `load`.
struct ServiceSpec {
  std::string name;  // a DNS label, unique in the scenario
  LoadSpec load;
  // The queue-time SLO in microseconds; nullopt: the harness's default.
  std::optional<std::int64_t> sloMicros;
  int priority = 0;  // higher is served first when the services compete for GPUs
  // The service's own `workload.claim` (as Scenario::workloadClaimDeviceClass/Selector, for this
  // service only: in one scenario a service of claims on DRA nodes runs beside one of device-plugin
  // requests). Empty: the scenario's workload. Validated here, not used by the emulator.
  std::string claimDeviceClass;
  std::string claimSelector;
};

// Which inference server the pods run, and so which series the load model exports.
enum class InferenceServer { kTriton, kVllm };
std::string_view inferenceServerName(InferenceServer server);

// The HPA scale-in behavior of a scenario's harness (autoscaling/v2 `behavior.scaleDown` with one
// policy). Default: one pod per 15 s after a 30 s window, so the queue is not overloaded again.
struct HarnessScaleDown {
  bool percent = false;  // the policy's type: Percent, else Pods
  int value = 1;
  int periodSeconds = 15;
  int stabilizationWindowSeconds = 30;
};

// The HPA scale-out behavior of a scenario's harness (autoscaling/v2 `behavior.scaleUp`): up to two
// policies per `periodSeconds`, a Percent and a Pods one, the larger step winning (selectPolicy
// Max). `given` false: the harness writes no scaleUp and the HPA controller's default applies (at
// most double, or add 4 pods, per 15 s, no stabilization window), which these values also hold.
struct HarnessScaleUp {
  bool given = false;
  std::optional<int> percent = 100;
  std::optional<int> pods = 4;
  int periodSeconds = 15;
  int stabilizationWindowSeconds = 0;
};

struct Scenario {
  std::string name;
  std::string description;
  OperatorSpec gpuOperator;
  std::vector<GpuNodeSpec> nodes;
  // The load: one service (`load:`) or several (`services:`), never both.
  std::optional<LoadSpec> load;
  std::vector<ServiceSpec> services;
  // What the load driver drives: `services`, or `load` as one service with an empty name.
  std::vector<ServiceSpec> loadServices() const;
  // `reconciler.gpuMapping`: the --gpu-mapping bench/scenario/run.sh gives gpuscale-reconciler
  // (node | dcgm; dcgm reads the emulator's dcgm-exporter series through the scenario's
  // Prometheus). Validated here, not used by the emulator.
  std::string reconcilerGpuMapping = "node";
  // `hpa.scaleDown`: the scale-in behavior of the HPA bench/scenario/run.sh creates (one policy of
  // `pods` or `percent` per `periodSeconds`, after `stabilizationWindowSeconds`). Validated here,
  // not used by the emulator.
  HarnessScaleDown hpaScaleDown;
  // `hpa.scaleUp`: the scale-out behavior of that HPA (`percent` and/or `pods` per
  // `periodSeconds`, after `stabilizationWindowSeconds`; a latency-bound service may scale out
  // faster than the default). Validated here, not used by the emulator.
  HarnessScaleUp hpaScaleUp;
  // `workload`: the Deployment bench/scenario/run.sh creates. `resource` (default: the 1g.5gb MIG
  // resource on mixed-strategy nodes, else nvidia.com/gpu) and `nodeSelector` of its pod template
  // (e.g. nvidia.com/gpu.product: Tesla-T4-SHARED). Validated here, not used by the emulator.
  std::string workloadResource;
  std::map<std::string, std::string> workloadNodeSelector;
  // `workload.server`: triton (default) or vllm. The emulator's load model exports that server's
  // series (triton_exposition.h or vllm_exposition.h); bench/scenario/run.sh picks the rule file,
  // the HPA's metric and the container from it.
  InferenceServer workloadServer = InferenceServer::kTriton;
  // `workload.args`: the container's arguments in the Deployment bench/scenario/run.sh creates
  // (e.g. vLLM's --gpu-memory-utilization). Validated here, not used by the emulator.
  std::vector<std::string> workloadArgs;
  // `workload.scaler`: hpa (default: a plain HPA), keda (a KEDA ScaledObject whose operator owns
  // the HPA) or planner (no HPA: an external planner process scales the workload and asks for
  // partitions through a GPUCapacityRequest); `workload.kind`: Deployment (default) or
  // LeaderWorkerSet (the custom resource of its shape, whose groups `run --pod-groups` keeps),
  // `workload.size` pods per replica (its leaderWorkerTemplate.size, default 1). Validated here,
  // not used by the emulator.
  std::string workloadScaler = "hpa";
  std::string workloadKind = "Deployment";
  int workloadSize = 1;
  // `workload.claim`: the pods request one device through a ResourceClaimTemplate of this
  // DeviceClass (`deviceClass`) and CEL selector (`selector`, optional) instead of a device-plugin
  // resource (exclusive with `resource`). Validated here, not used by the emulator.
  std::string workloadClaimDeviceClass;
  std::string workloadClaimSelector;
};

// Parses and validates a scenario: node names unique and valid, strategies known, geometries valid
// for the node's model, device-plugin configs parse, failure counts positive, load numbers sane;
// services named uniquely, with a load each and distinct (namespace, podSelector) pairs, and not
// together with `load`.
core::Result<Scenario> parseScenario(std::string_view yaml);
core::Result<Scenario> loadScenarioFile(const std::string& path);

}  // namespace gpuscale::sim
