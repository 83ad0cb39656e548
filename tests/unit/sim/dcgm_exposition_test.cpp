#include "gpuscale/sim/dcgm_exposition.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gpuscale::sim {
namespace dcgm_exposition_test {

using partition::MigGpuSetting;

NodePod pod(const std::string& name, const std::string& resource, int gpu) {
  NodePod p;
  p.uid = "uid-" + name;
  p.namespaceName = "default";
  p.name = name;
  p.created = "2026-01-01T00:00:0" + name.substr(name.size() - 1) + "Z";
  p.requests = {{resource, 1}};
  p.gpus = {gpu};
  p.container = "triton";
  return p;
}

// Two A100-40GB, mixed strategy: GPU 0 all-balanced holding two 1g.5gb pods, GPU 1 all-3g.20gb.
NodeGpuView twoA100s() {
  NodeGpuView v;
  v.spec.name = "gpu-a100-0";
  v.spec.product = "NVIDIA-A100-SXM4-40GB";
  v.spec.gpus = 2;
  v.spec.memoryMiB = 40960;
  v.spec.migCapable = true;
  v.spec.migStrategy = partition::MigStrategy::kMixed;
  v.gpus = {MigGpuSetting{true, {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}},
            MigGpuSetting{true, {{"3g.20gb", 2}}}};
  v.pods = assignDevices(
      v.spec, v.gpus, nullptr,
      {pod("triton-0", "nvidia.com/mig-1g.5gb", 0), pod("triton-1", "nvidia.com/mig-1g.5gb", 0)});
  return v;
}

std::vector<std::string> linesOf(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) out.push_back(line);
  }
  return out;
}

TEST(DcgmExpositionTest, MigInstancesWithTheirPods) {
  const NodeGpuView node = twoA100s();
  const std::string busyKey = deviceKey("gpu-a100-0", 0, "nvidia.com/mig-1g.5gb", 1);
  const std::string text = renderDcgmSeries({node}, {{busyKey, 0.9}});
  const auto fb = linesOf(text, "DCGM_FI_DEV_FB_USED{");
  ASSERT_EQ(fb.size(), 6u) << "one series per MIG instance: 4 on GPU 0, 2 on GPU 1\n" << text;
  const std::string gpu0 = R"(gpu="0",UUID="GPU-)";
  struct Row {
    const char* what;
    std::string fragment;
  };
  const std::vector<Row> rows = {
      {"a held 1g.5gb instance names its pod, half its 5 GiB used",
       R"(GPU_I_PROFILE="1g.5gb",GPU_I_ID="1",Hostname="gpu-a100-0",container="triton",namespace="default",pod="triton-0"} 2560)"},
      {"the second 1g.5gb instance holds the second pod",
       R"(GPU_I_PROFILE="1g.5gb",GPU_I_ID="2",Hostname="gpu-a100-0",container="triton",namespace="default",pod="triton-1"} 2560)"},
      {"an idle instance has no pod labels and uses nothing",
       R"(GPU_I_PROFILE="2g.10gb",GPU_I_ID="3",Hostname="gpu-a100-0"} 0)"},
      {"GPU 1's instances are idle",
       R"(device="nvidia1",modelName="NVIDIA A100-SXM4-40GB",GPU_I_PROFILE="3g.20gb",GPU_I_ID="2",Hostname="gpu-a100-0"} 0)"},
      {"parent GPU labels in dcgm-exporter's order", gpu0},
  };
  const std::string all = [&] {
    std::string s;
    for (const auto& l : fb) s += l + "\n";
    return s;
  }();
  for (const Row& row : rows) {
    EXPECT_NE(all.find(row.fragment), std::string::npos) << row.what << "\n" << all;
  }
  EXPECT_NE(text.find(R"(pod="triton-1"} 0.9)"), std::string::npos)
      << "GR_ENGINE_ACTIVE follows the device's busy fraction\n"
      << text;
  EXPECT_TRUE(linesOf(text, "DCGM_FI_DEV_GPU_UTIL").empty())
      << "dcgm reports no GPU_UTIL for MIG instances\n"
      << text;
  EXPECT_EQ(linesOf(text, "# TYPE DCGM_FI_DEV_FB_FREE gauge").size(), 1u);
  EXPECT_NE(text.find(R"(GPU_I_PROFILE="3g.20gb",GPU_I_ID="2",Hostname="gpu-a100-0"} 20480)"),
            std::string::npos)
      << "FB_FREE of an idle 3g.20gb instance\n"
      << text;
  EXPECT_EQ(renderDcgmSeries({node}, {}), renderDcgmSeries({twoA100s()}, {}))
      << "UUIDs and instance ids are stable";
}

TEST(DcgmExpositionTest, TimeSlicedWholeGpusNameOnePodEach) {
  NodeGpuView v;
  v.spec.name = "gpu-t4-0";
  v.spec.product = "Tesla-T4";
  v.spec.gpus = 2;
  v.spec.memoryMiB = 15360;
  v.gpus = {MigGpuSetting{false, {}}, MigGpuSetting{false, {}}};
  auto config = partition::parseDevicePluginConfig(
      "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n"
      "      replicas: 4\n");
  ASSERT_TRUE(config.ok()) << config.status().toString();
  v.devicePluginConfig = *config;
  v.pods = assignDevices(v.spec, v.gpus, &*v.devicePluginConfig,
                         {pod("t-2", "nvidia.com/gpu", 0), pod("t-1", "nvidia.com/gpu", 0)});
  const std::string text =
      renderDcgmSeries({v}, {{deviceKey("gpu-t4-0", 0, "nvidia.com/gpu", 0), 0.456}});
  const auto util = linesOf(text, "DCGM_FI_DEV_GPU_UTIL{");
  ASSERT_EQ(util.size(), 2u) << "one series per whole GPU, not per replica\n" << text;
  EXPECT_NE(
      util[0].find(
          R"(modelName="Tesla T4",Hostname="gpu-t4-0",container="triton",namespace="default",pod="t-1"} 46)"),
      std::string::npos)
      << "a shared GPU names its first pod only; GPU_UTIL in %\n"
      << util[0];
  EXPECT_EQ(util[1].find("pod="), std::string::npos) << util[1];
  EXPECT_EQ(util[1].find("GPU_I_"), std::string::npos) << util[1];
  EXPECT_NE(text.find(R"(gpu="1",UUID="GPU-)"), std::string::npos);
}

TEST(DcgmExpositionTest, PausedOperandsExportNothing) {
  NodeGpuView paused = twoA100s();
  paused.operandsPaused = true;
  EXPECT_EQ(renderDcgmSeries({paused}, {}), "");
  NodeGpuView other = twoA100s();
  other.spec.name = "gpu-a100-1";
  const std::string text = renderDcgmSeries({paused, other}, {});
  EXPECT_EQ(text.find(R"(Hostname="gpu-a100-0")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(Hostname="gpu-a100-1")"), std::string::npos) << text;
}

}  // namespace dcgm_exposition_test
}  // namespace gpuscale::sim
