#include "gpuscale/sim/gpu_operator_emulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <prometheus/text_serializer.h>

#include "fakes/fake_kube_client.h"

namespace gpuscale::sim {
namespace gpu_operator_emulator_test {

using std::chrono::seconds;
using testing::FakeKubeClient;
using ::testing::HasSubstr;

constexpr const char* kScenario = R"(
name: unit
gpuOperator:
  migManager: {reconfigureSeconds: 5}
  devicePlugin:
    configs:
      ts-4: |
        version: v1
        sharing:
          timeSlicing:
            resources: [{name: nvidia.com/gpu, replicas: 4}]
nodes:
- {name: a100, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migStrategy: mixed, migConfig: all-1g.5gb}
- {name: a100-bad, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migStrategy: mixed,
   migConfig: all-1g.5gb, failures: [{mode: fail}]}
- {name: t4, product: Tesla-T4, memoryMiB: 15360}
- {name: a100-absent, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migStrategy: mixed,
   migConfig: all-1g.5gb, migManager: {present: false}}
- {name: a100-empty, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migStrategy: mixed,
   migConfig: all-1g.5gb, migManager: {present: false, stateLabel: empty}}
- {name: a100-slow, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migStrategy: mixed,
   migConfig: all-1g.5gb, migManager: {reconfigureSeconds: 30}}
- {name: a100-reboot, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migStrategy: mixed,
   migConfig: all-1g.5gb, failures: [{mode: hang-rebooting}]}
)";

const kube::ResourceRef kNodes{"", "v1", "nodes", "", "", ""};

class EmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto scenario = parseScenario(kScenario);
    ASSERT_TRUE(scenario.ok()) << scenario.status().toString();
    EmulatorOptions options;
    options.background = false;
    auto e = GpuOperatorEmulator::create(client_, *scenario, options, registry_);
    ASSERT_TRUE(e.ok()) << e.status().toString();
    emulator_ = std::move(*e);
    ASSERT_TRUE(emulator_->start().ok());
  }

  kube::Object node(const std::string& name) { return *client_->get(kNodes.named(name)); }
  std::string label(const std::string& n, const std::string& key) {
    return node(n)["metadata"]["labels"].value(key, "");
  }
  std::string allocatable(const std::string& n, const std::string& resource) {
    return node(n)["status"]["allocatable"].value(resource, "");
  }
  void setLabel(const std::string& n, const std::string& key, const std::string& value) {
    ASSERT_TRUE(client_
                    ->patch(kNodes.named(n), kube::PatchType::kMerge,
                            {{"metadata", {{"labels", {{key, value}}}}}})
                    .ok());
  }
  void bindPod(const std::string& name, const std::string& n, const std::string& resource) {
    kube::Object pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", name}}},
        {"spec",
         {{"nodeName", n},
          {"containers", {{{"name", "c"}, {"resources", {{"limits", {{resource, "1"}}}}}}}}}},
        {"status", {{"phase", "Running"}}}};
    ASSERT_TRUE(client_->create({"", "v1", "pods", "default", "", ""}, pod).ok());
  }
  void at(int s) { emulator_->reconcile(t0_ + seconds(s)); }

  std::shared_ptr<FakeKubeClient> client_ = std::make_shared<FakeKubeClient>();
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::unique_ptr<GpuOperatorEmulator> emulator_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

TEST_F(EmulatorTest, CreatesConfigMapsAndKwokNodes) {
  EXPECT_TRUE(emulator_->healthy());
  auto cm = client_->get({"", "v1", "configmaps", "gpu-operator", "default-mig-parted-config", ""});
  ASSERT_TRUE(cm.ok());
  EXPECT_THAT((*cm)["data"]["config.yaml"].get<std::string>(), HasSubstr("all-balanced"));
  ASSERT_TRUE(
      client_->get({"", "v1", "configmaps", "gpu-operator", "device-plugin-config", ""}).ok());
  const auto a100 = node("a100");
  EXPECT_EQ(a100["metadata"]["annotations"]["kwok.x-k8s.io/node"], "fake");
  EXPECT_EQ(label("a100", "nvidia.com/mig.config"), "all-1g.5gb");
  EXPECT_EQ(label("a100", "nvidia.com/mig.config.state"), "success");
  EXPECT_EQ(label("a100", "nvidia.com/mig-1g.5gb.count"), "7");
  EXPECT_EQ(allocatable("a100", "nvidia.com/mig-1g.5gb"), "7");
  EXPECT_EQ(a100["status"]["capacity"]["cpu"], "32");
  EXPECT_EQ(allocatable("t4", "nvidia.com/gpu"), "1");
  EXPECT_EQ(label("t4", "nvidia.com/mig.config.state"), "") << "no mig-manager on a T4";
}

TEST_F(EmulatorTest, IdleReconfigurationWalksPendingToSuccess) {
  setLabel("a100", "nvidia.com/mig.config", "all-balanced");
  at(1);
  EXPECT_EQ(label("a100", "nvidia.com/mig.config.state"), "pending");
  EXPECT_EQ(label("a100", "nvidia.com/gpu.deploy.device-plugin"), "paused-for-mig-change");
  EXPECT_EQ(allocatable("a100", "nvidia.com/mig-1g.5gb"), "0");
  EXPECT_EQ(node("a100")["status"]["capacity"]["nvidia.com/mig-1g.5gb"], "7");
  at(5);
  EXPECT_EQ(label("a100", "nvidia.com/mig.config.state"), "pending") << "delay not over";
  at(6);
  EXPECT_EQ(label("a100", "nvidia.com/mig.config.state"), "success");
  EXPECT_EQ(label("a100", "nvidia.com/gpu.deploy.device-plugin"), "true");
  EXPECT_EQ(allocatable("a100", "nvidia.com/mig-1g.5gb"), "2");
  EXPECT_EQ(allocatable("a100", "nvidia.com/mig-2g.10gb"), "1");
  EXPECT_EQ(allocatable("a100", "nvidia.com/mig-3g.20gb"), "1");
  EXPECT_EQ(label("a100", "nvidia.com/mig-3g.20gb.count"), "1");
  // Back to all-3g.20gb: 1g and 2g disappear from the node, with their GFD labels.
  setLabel("a100", "nvidia.com/mig.config", "all-3g.20gb");
  at(7);
  at(12);
  EXPECT_EQ(label("a100", "nvidia.com/mig.config.state"), "success");
  EXPECT_EQ(allocatable("a100", "nvidia.com/mig-3g.20gb"), "2");
  EXPECT_FALSE(node("a100")["status"]["allocatable"].contains("nvidia.com/mig-1g.5gb"));
  EXPECT_FALSE(node("a100")["status"]["capacity"].contains("nvidia.com/mig-2g.10gb"));
  EXPECT_EQ(label("a100", "nvidia.com/mig-1g.5gb.count"), "");
  const std::string metrics = prometheus::TextSerializer().Serialize(registry_->Collect());
  EXPECT_THAT(
      metrics,
      HasSubstr("gpuscale_sim_mig_reconfigurations_total{node=\"a100\",result=\"success\"} 2"));
}

TEST_F(EmulatorTest, BusyGpuAndInjectedFailuresFail) {
  bindPod("p1", "a100", "nvidia.com/mig-1g.5gb");
  setLabel("a100", "nvidia.com/mig.config", "all-3g.20gb");
  at(1);
  EXPECT_EQ(label("a100", "nvidia.com/mig.config.state"), "pending");
  at(6);
  EXPECT_EQ(label("a100", "nvidia.com/mig.config.state"), "failed");
  EXPECT_EQ(allocatable("a100", "nvidia.com/mig-1g.5gb"), "7") << "old geometry restored";
  EXPECT_TRUE(client_->get({"", "v1", "pods", "default", "p1", ""}).ok()) << "pods are not touched";

  setLabel("a100-bad", "nvidia.com/mig.config", "all-3g.20gb");
  at(7);
  at(12);
  EXPECT_EQ(label("a100-bad", "nvidia.com/mig.config.state"), "failed");
  EXPECT_EQ(allocatable("a100-bad", "nvidia.com/mig-1g.5gb"), "7");

  setLabel("a100", "nvidia.com/mig.config", "no-such-config");
  at(13);
  EXPECT_EQ(label("a100", "nvidia.com/mig.config.state"), "failed");
  EXPECT_EQ(allocatable("a100", "nvidia.com/mig-1g.5gb"), "7") << "an unknown name pauses nothing";
}

TEST_F(EmulatorTest, PerNodeMigManagerFailureModes) {
  // Absent: no state label (or an empty one), and a new mig.config is never acted on.
  EXPECT_FALSE(node("a100-absent")["metadata"]["labels"].contains("nvidia.com/mig.config.state"));
  EXPECT_EQ(label("a100-absent", "nvidia.com/gpu.deploy.mig-manager"), "");
  EXPECT_TRUE(node("a100-empty")["metadata"]["labels"].contains("nvidia.com/mig.config.state"));
  EXPECT_EQ(label("a100-empty", "nvidia.com/mig.config.state"), "");
  for (const char* n : {"a100-absent", "a100-empty", "a100-slow", "a100-reboot"}) {
    setLabel(n, "nvidia.com/mig.config", "all-3g.20gb");
  }
  at(1);
  at(6);
  for (const char* n : {"a100-absent", "a100-empty"}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(allocatable(n, "nvidia.com/mig-1g.5gb"), "7") << "nothing applied the config";
    EXPECT_EQ(label(n, "nvidia.com/gpu.deploy.device-plugin"), "true");
  }
  // Slow: still pending past the operator's 5 s, done after its own 30 s.
  EXPECT_EQ(label("a100-slow", "nvidia.com/mig.config.state"), "pending");
  at(31);
  EXPECT_EQ(label("a100-slow", "nvidia.com/mig.config.state"), "success");
  EXPECT_EQ(allocatable("a100-slow", "nvidia.com/mig-3g.20gb"), "2");
  // Hang rebooting: pending for the delay, then rebooting for ever, operands paused.
  EXPECT_EQ(label("a100-reboot", "nvidia.com/mig.config.state"), "rebooting");
  at(600);
  EXPECT_EQ(label("a100-reboot", "nvidia.com/mig.config.state"), "rebooting");
  EXPECT_EQ(label("a100-reboot", "nvidia.com/gpu.deploy.device-plugin"), "paused-for-mig-change");
  EXPECT_EQ(allocatable("a100-reboot", "nvidia.com/mig-1g.5gb"), "0");
}

TEST_F(EmulatorTest, TimeSlicingFollowsTheDevicePluginLabel) {
  bindPod("p1", "t4", "nvidia.com/gpu");
  setLabel("t4", "nvidia.com/device-plugin.config", "ts-4");
  at(1);
  EXPECT_EQ(allocatable("t4", "nvidia.com/gpu"), "4");
  EXPECT_EQ(label("t4", "nvidia.com/gpu.replicas"), "4");
  EXPECT_EQ(label("t4", "nvidia.com/gpu.product"), "Tesla-T4-SHARED");
  EXPECT_EQ(label("t4", "nvidia.com/gpu.sharing-strategy"), "time-slicing");
  EXPECT_TRUE(client_->get({"", "v1", "pods", "default", "p1", ""}).ok());

  // A key that does not exist yet keeps the old config until it appears (sidecar retries).
  setLabel("t4", "nvidia.com/device-plugin.config", "ts-8");
  at(2);
  EXPECT_EQ(allocatable("t4", "nvidia.com/gpu"), "4");
  ASSERT_TRUE(client_
                  ->patch({"", "v1", "configmaps", "gpu-operator", "device-plugin-config", ""},
                          kube::PatchType::kMerge,
                          {{"data",
                            {{"ts-8",
                              "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                              "    - {name: nvidia.com/gpu, replicas: 8}\n"}}}})
                  .ok());
  at(3);
  EXPECT_EQ(allocatable("t4", "nvidia.com/gpu"), "8");
  // Removing the label falls back to the default config (none here): no sharing.
  ASSERT_TRUE(
      client_
          ->patch(kNodes.named("t4"), kube::PatchType::kMerge,
                  {{"metadata", {{"labels", {{"nvidia.com/device-plugin.config", nullptr}}}}}})
          .ok());
  at(4);
  EXPECT_EQ(allocatable("t4", "nvidia.com/gpu"), "1");
  EXPECT_EQ(label("t4", "nvidia.com/gpu.product"), "Tesla-T4");
}

TEST_F(EmulatorTest, ExistingConfigMapsAndNodesAreKept) {
  ASSERT_TRUE(client_
                  ->patch({"", "v1", "configmaps", "gpu-operator", "device-plugin-config", ""},
                          kube::PatchType::kMerge, {{"data", {{"extra", "x"}}}})
                  .ok());
  setLabel("a100", "pool", "gpu");
  auto scenario = parseScenario(kScenario);
  EmulatorOptions options;
  options.background = false;
  auto second = GpuOperatorEmulator::create(client_, *scenario, options,
                                            std::make_shared<prometheus::Registry>());
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE((*second)->start().ok());
  auto cm = client_->get({"", "v1", "configmaps", "gpu-operator", "device-plugin-config", ""});
  EXPECT_EQ((*cm)["data"]["extra"], "x");
  EXPECT_EQ(label("a100", "pool"), "gpu");
}

TEST(EmulatorCreateTest, RejectsAnInitialConfigNoConfigMapHas) {
  auto scenario = parseScenario(
      "name: x\nnodes: [{name: a, product: NVIDIA-A100-SXM4-40GB, memoryMiB: 40960, migConfig: "
      "all-9g}]");
  ASSERT_TRUE(scenario.ok());
  auto e = GpuOperatorEmulator::create(std::make_shared<FakeKubeClient>(), *scenario, {},
                                       std::make_shared<prometheus::Registry>());
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("all-9g"));
}

}  // namespace gpu_operator_emulator_test
}  // namespace gpuscale::sim
