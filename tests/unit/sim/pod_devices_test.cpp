#include "gpuscale/sim/pod_devices.h"

#include <gtest/gtest.h>

namespace gpuscale::sim {
namespace pod_devices_test {

using partition::MigGpuSetting;

GpuNodeSpec a100(partition::MigStrategy strategy) {
  GpuNodeSpec n;
  n.name = "gpu-a100-0";
  n.product = "NVIDIA-A100-SXM4-40GB";
  n.memoryMiB = 40960;
  n.migCapable = true;
  n.migStrategy = strategy;
  return n;
}

GpuNodeSpec t4(int gpus) {
  GpuNodeSpec n;
  n.name = "gpu-t4-0";
  n.product = "Tesla-T4";
  n.gpus = gpus;
  n.memoryMiB = 15360;
  return n;
}

partition::DevicePluginConfig timeSliced(const std::string& resource, int replicas) {
  auto c = partition::parseDevicePluginConfig(
      "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: " + resource +
      "\n      replicas: " + std::to_string(replicas) + "\n");
  EXPECT_TRUE(c.ok()) << c.status().toString();
  return *c;
}

std::vector<NodePod> pods(int n, const std::string& resource, std::vector<int> gpus = {}) {
  std::vector<NodePod> out;
  for (int i = 0; i < n; ++i) {
    NodePod p;
    p.uid = "u" + std::to_string(i);
    p.namespaceName = "default";
    p.name = "triton-" + std::to_string(i);
    p.created = "2026-01-01T00:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "Z";
    p.requests = {{resource, 1}};
    if (!gpus.empty()) p.gpus = {gpus[i]};
    out.push_back(std::move(p));
  }
  return out;
}

TEST(PodDevicesTest, SharingAndComputeFraction) {
  const MigGpuSetting all1g{true, {{"1g.5gb", 7}}};
  const MigGpuSetting balanced{true, {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}};
  const MigGpuSetting whole{false, {}};
  const auto ts2 = timeSliced("nvidia.com/mig-1g.5gb", 2);
  const auto t4ts4 = timeSliced("nvidia.com/gpu", 4);
  struct Row {
    const char* what;
    GpuNodeSpec node;
    std::vector<MigGpuSetting> gpus;
    const partition::DevicePluginConfig* config;
    std::vector<NodePod> pods;
    double wantFraction;
    std::vector<int> wantSharers;  // per pod, in order
  };
  const std::vector<Row> rows = {
      {"seven 1g slices, seven pods: one each, 1/7 of the A100",
       a100(partition::MigStrategy::kMixed),
       {all1g},
       nullptr,
       pods(7, "nvidia.com/mig-1g.5gb"),
       1.0 / 7,
       {1, 1, 1, 1, 1, 1, 1}},
      {"time-slicing x2, nine pods: the first two slices are shared",
       a100(partition::MigStrategy::kMixed),
       {all1g},
       &ts2,
       pods(9, "nvidia.com/mig-1g.5gb"),
       1.0 / 7,
       {2, 2, 1, 1, 1, 1, 1, 2, 2}},
      {"time-slicing x2, fourteen pods: every slice holds two",
       a100(partition::MigStrategy::kMixed),
       {all1g},
       &ts2,
       pods(14, "nvidia.com/mig-1g.5gb"),
       1.0 / 7,
       std::vector<int>(14, 2)},
      {"single strategy: nvidia.com/gpu is a 1g device",
       a100(partition::MigStrategy::kSingle),
       {all1g},
       nullptr,
       pods(2, "nvidia.com/gpu"),
       1.0 / 7,
       {1, 1}},
      {"all-balanced: a 2g.10gb instance is 2/7",
       a100(partition::MigStrategy::kMixed),
       {balanced},
       nullptr,
       pods(1, "nvidia.com/mig-2g.10gb"),
       2.0 / 7,
       {1}},
      {"MIG disabled: a whole A100",
       a100(partition::MigStrategy::kMixed),
       {whole},
       nullptr,
       pods(1, "nvidia.com/gpu"),
       1.0,
       {1}},
      {"T4s, one pod per GPU",
       t4(4),
       {whole, whole, whole, whole},
       nullptr,
       pods(4, "nvidia.com/gpu", {0, 1, 2, 3}),
       1.0,
       {1, 1, 1, 1}},
      {"T4 time-sliced x4, four pods on GPU 0 share it",
       t4(2),
       {whole, whole},
       &t4ts4,
       pods(4, "nvidia.com/gpu", {0, 0, 0, 0}),
       1.0,
       {4, 4, 4, 4}},
      {"T4 time-sliced x4, pods on two GPUs",
       t4(2),
       {whole, whole},
       &t4ts4,
       pods(3, "nvidia.com/gpu", {0, 1, 0}),
       1.0,
       {2, 1, 2}},
  };
  for (const Row& row : rows) {
    const auto devices = assignDevices(row.node, row.gpus, row.config, row.pods);
    ASSERT_EQ(devices.size(), row.pods.size()) << row.what;
    for (size_t i = 0; i < devices.size(); ++i) {
      EXPECT_EQ(devices[i].name, row.pods[i].name) << row.what << ": input order";
      EXPECT_DOUBLE_EQ(devices[i].computeFraction, row.wantFraction) << row.what;
      EXPECT_EQ(devices[i].sharers, row.wantSharers[i]) << row.what << " pod " << i;
      EXPECT_TRUE(devices[i].device.starts_with(row.node.name + "/gpu")) << devices[i].device;
    }
  }
}

TEST(PodDevicesTest, MpsClientsGetTheDaemonsThreadShare) {
  const MigGpuSetting whole{false, {}};
  struct Row {
    const char* what;
    const char* config;
    double wantShare;
  };
  const Row rows[] = {
      {"MPS x4: 25 %",
       "version: v1\nsharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 4}]\n",
       0.25},
      {"MPS x3: whole percent, 33 %",
       "version: v1\nsharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 3}]\n",
       0.33},
      {"time-slicing x4: not MPS",
       "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: "
       "4}]\n",
       0},
  };
  for (const Row& row : rows) {
    const auto config = partition::parseDevicePluginConfig(row.config);
    ASSERT_TRUE(config.ok()) << row.what;
    const auto devices = assignDevices(t4(1), {whole}, &*config, pods(2, "nvidia.com/gpu", {0, 0}));
    ASSERT_EQ(devices.size(), 2u) << row.what;
    for (const auto& d : devices) {
      EXPECT_DOUBLE_EQ(d.mpsThreadFraction, row.wantShare) << row.what;
      EXPECT_EQ(d.sharers, 2) << row.what;
    }
  }
  EXPECT_DOUBLE_EQ(assignDevices(t4(1), {whole}, nullptr, pods(1, "nvidia.com/gpu", {0}))
                       .at(0)
                       .mpsThreadFraction,
                   0)
      << "no sharing";
}

TEST(PodDevicesTest, CreationOrderAndPodsWithoutGpuRequests) {
  const MigGpuSetting all1g{true, {{"1g.5gb", 7}}};
  const auto ts2 = timeSliced("nvidia.com/mig-1g.5gb", 2);
  auto ps = pods(8, "nvidia.com/mig-1g.5gb");
  std::swap(ps[0].created, ps[7].created);  // the listed first pod is the newest
  ps.push_back(NodePod{"cpu", "default", "cpu-only", "2026", {}, {}, {}, ""});
  const auto devices = assignDevices(a100(partition::MigStrategy::kMixed), {all1g}, &ts2, ps);
  ASSERT_EQ(devices.size(), 8u) << "a pod without nvidia.com requests has no device";
  EXPECT_EQ(devices[0].sharers, 2) << "the newest (8th) pod shares the first slice";
  EXPECT_EQ(devices[0].device, devices[7].device) << "with the oldest";
}

}  // namespace pod_devices_test
}  // namespace gpuscale::sim
