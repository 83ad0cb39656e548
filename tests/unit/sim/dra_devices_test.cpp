#include "gpuscale/sim/dra_devices.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "gpuscale/sim/gpu_identity.h"

namespace gpuscale::sim {
namespace dra_devices_test {

using kube::Object;
using partition::MigGpuSetting;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

GpuNodeSpec node(std::string product, std::int64_t memoryMiB, bool migCapable, int gpus = 1,
                 bool dynamicMig = false) {
  GpuNodeSpec n;
  n.name = "gpu-node";
  n.product = std::move(product);
  n.gpus = gpus;
  n.memoryMiB = memoryMiB;
  n.migCapable = migCapable;
  n.dra = DraSpec{};
  n.dra->dynamicMig = dynamicMig;
  return n;
}

GpuNodeSpec a100(int gpus = 1, bool dynamicMig = false) {
  return node("NVIDIA-A100-SXM4-40GB", 40960, true, gpus, dynamicMig);
}

const MigGpuSetting kSeven{true, {{"1g.5gb", 7}}};
const MigGpuSetting kBalanced{true, {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}};
const MigGpuSetting kWhole{false, {}};

std::vector<std::string> names(const Object& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d["name"]);
  return out;
}

const Object& device(const Object& devices, std::string_view name) {
  for (const auto& d : devices) {
    if (d["name"] == name) return d;
  }
  static const Object kNone;
  ADD_FAILURE() << "no device " << name;
  return kNone;
}

TEST(DraDevicesTest, StaticMigPublishesTheInstancesMigManagerCreated) {
  const auto slices = draSlices(a100(2), {kSeven, kBalanced}, true);
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_TRUE(slices[0].sharedCounters.empty());
  EXPECT_THAT(names(slices[0].devices),
              ElementsAre("gpu-0-mig-1g5gb-19-0", "gpu-0-mig-1g5gb-19-1", "gpu-0-mig-1g5gb-19-2",
                          "gpu-0-mig-1g5gb-19-3", "gpu-0-mig-1g5gb-19-4", "gpu-0-mig-1g5gb-19-5",
                          "gpu-0-mig-1g5gb-19-6", "gpu-1-mig-1g5gb-19-0", "gpu-1-mig-1g5gb-19-1",
                          "gpu-1-mig-2g10gb-14-2", "gpu-1-mig-3g20gb-9-4"));
  const Object& d = device(slices[0].devices, "gpu-1-mig-3g20gb-9-4");
  EXPECT_EQ(d["attributes"]["type"]["string"], "mig");
  EXPECT_EQ(d["attributes"]["profile"]["string"], "3g.20gb");
  EXPECT_EQ(d["attributes"]["productName"]["string"], "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(d["attributes"]["parentUUID"]["string"], gpuUuid("gpu-node", 1));
  EXPECT_EQ(d["attributes"]["uuid"]["string"], migUuid("gpu-node", 1, "3g.20gb", 4));
  EXPECT_EQ(d["attributes"]["architecture"]["string"], "Ampere");
  EXPECT_EQ(d["attributes"]["cudaComputeCapability"]["version"], "8.0.0");
  EXPECT_EQ(d["attributes"]["resource.kubernetes.io/pciBusID"]["string"], "0000:0f:00.0");
  EXPECT_EQ(d["capacity"]["memory"]["value"], "19968Mi");
  EXPECT_EQ(d["capacity"]["multiprocessors"]["value"], "42");
  EXPECT_EQ(d["capacity"]["decoders"]["value"], "2");
  // The memory slots it holds, and only those.
  for (int s = 0; s < 8; ++s) {
    EXPECT_EQ(d["capacity"].contains(fmt::format("memorySlice{}", s)), s >= 4) << s;
  }
  EXPECT_FALSE(d.contains("consumesCounters"));
}

TEST(DraDevicesTest, StaticWholeGpus) {
  struct Case {
    const char* what;
    GpuNodeSpec spec;
    std::vector<MigGpuSetting> gpus;
    std::vector<std::string> devices;
    std::string memory;
    std::string architecture;
    std::string productName;
  };
  GpuNodeSpec named = node("NVIDIA-H100-80GB-HBM3", 81920, true);
  named.dra->productName = "NVIDIA H100 80GB HBM3";
  const Case cases[] = {
      {"A100 with MIG off", a100(), {kWhole}, {"gpu-0"}, "40Gi", "Ampere", "NVIDIA A100-SXM4-40GB"},
      {"four T4s",
       node("Tesla-T4", 15360, false, 4),
       {},
       {"gpu-0", "gpu-1", "gpu-2", "gpu-3"},
       "15Gi",
       "Turing",
       "Tesla T4"},
      {"T4s under DynamicMIG fall back to static",
       node("Tesla-T4", 15360, false, 2, true),
       {},
       {"gpu-0", "gpu-1"},
       "15Gi",
       "Turing",
       "Tesla T4"},
      {"productName given", named, {kWhole}, {"gpu-0"}, "80Gi", "Hopper", "NVIDIA H100 80GB HBM3"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const auto slices = draSlices(c.spec, c.gpus, true);
    ASSERT_EQ(slices.size(), 1u);
    EXPECT_THAT(names(slices[0].devices), ElementsAreArray(c.devices));
    const Object& d = slices[0].devices[0];
    EXPECT_EQ(d["attributes"]["type"]["string"], "gpu");
    EXPECT_EQ(d["attributes"]["uuid"]["string"], gpuUuid("gpu-node", 0));
    EXPECT_EQ(d["attributes"]["productName"]["string"], c.productName);
    EXPECT_EQ(d["attributes"]["architecture"]["string"], c.architecture);
    EXPECT_EQ(d["attributes"]["brand"]["string"], "Nvidia");
    EXPECT_EQ(d["attributes"]["driverVersion"]["version"], "580.95.5");
    EXPECT_EQ(d["attributes"]["cudaDriverVersion"]["version"], "13.0.0");
    EXPECT_EQ(d["attributes"]["resource.kubernetes.io/pciBusID"]["string"], "0000:07:00.0");
    EXPECT_EQ(d["attributes"]["resource.kubernetes.io/pcieRoot"]["string"], "pci0000:00");
    EXPECT_EQ(d["capacity"]["memory"]["value"], c.memory);
  }
}

TEST(DraDevicesTest, DynamicMigPublishesEveryPlacementWithSharedCounters) {
  // Kubernetes 1.35+: the counter sets first, in a slice of their own, then one slice per GPU.
  const auto split = draSlices(a100(2, true), {kWhole, kSeven}, true);
  ASSERT_EQ(split.size(), 3u);
  EXPECT_TRUE(split[0].devices.empty());
  ASSERT_EQ(split[0].sharedCounters.size(), 2u);
  EXPECT_EQ(split[0].sharedCounters[0]["name"], "gpu-0-counter-set");
  const Object& set = split[0].sharedCounters[1]["counters"];
  EXPECT_EQ(set["multiprocessors"]["value"], "98");
  EXPECT_EQ(set["copy-engines"]["value"], "7");
  EXPECT_EQ(set["memory"]["value"], "40192Mi");
  EXPECT_EQ(set["memory-slice-7"]["value"], "1");
  EXPECT_EQ(set.size(), 7u + 8u);
  // GPU 0 (MIG off): the whole GPU and 7 + 7 + 4 + 3 + 2 + 1 + 1 placements; GPU 1 is an Ampere
  // part with MIG on, which cannot be handed out whole.
  EXPECT_EQ(split[1].devices.size(), 26u);
  EXPECT_EQ(split[2].devices.size(), 25u);
  EXPECT_TRUE(split[1].sharedCounters.empty());
  const Object& whole = device(split[1].devices, "gpu-0");
  EXPECT_EQ(whole["consumesCounters"][0]["counterSet"], "gpu-0-counter-set");
  EXPECT_EQ(whole["consumesCounters"][0]["counters"].size(), 15u);
  EXPECT_EQ(whole["capacity"]["memory"]["value"], "40192Mi");
  const Object& mig = device(split[2].devices, "gpu-1-mig-3g20gb-9-4");
  EXPECT_FALSE(mig["attributes"].contains("uuid"));  // it does not exist until prepared
  const Object& used = mig["consumesCounters"][0]["counters"];
  EXPECT_EQ(mig["consumesCounters"][0]["counterSet"], "gpu-1-counter-set");
  EXPECT_EQ(used["multiprocessors"]["value"], "42");
  EXPECT_EQ(used["memory"]["value"], "19968Mi");
  for (int s = 0; s < 8; ++s) EXPECT_EQ(used.contains(fmt::format("memory-slice-{}", s)), s >= 4);
  EXPECT_TRUE(device(split[2].devices, "gpu-1-mig-1g5gb-me-20-6").is_object());
  EXPECT_TRUE(device(split[2].devices, "gpu-1-mig-1g10gb-15-6").is_object());

  // Kubernetes 1.34: each GPU's slice carries its own counter set.
  const auto combined = draSlices(a100(2, true), {kWhole, kSeven}, false);
  ASSERT_EQ(combined.size(), 2u);
  for (int g = 0; g < 2; ++g) {
    ASSERT_EQ(combined[g].sharedCounters.size(), 1u);
    EXPECT_EQ(combined[g].sharedCounters[0]["name"], fmt::format("gpu-{}-counter-set", g));
  }
}

TEST(DraDevicesTest, DeviceNames) {
  struct Case {
    const char* name;
    std::optional<int> gpu;
    std::optional<int> profileId;
    int start;
  };
  const Case cases[] = {
      {"gpu-3", 3, std::nullopt, 0},
      {"gpu-0-mig-1g5gb-19-3", 0, 19, 3},
      {"gpu-12-mig-1g5gb-me-20-6", 12, 20, 6},
      {"gpu-1-mig-7g40gb-0-0", 1, 0, 0},
      {"gpu-x", std::nullopt, std::nullopt, 0},
      {"gpu-", std::nullopt, std::nullopt, 0},
      {"mig-1", std::nullopt, std::nullopt, 0},
      {"gpu-1-vfio", std::nullopt, std::nullopt, 0},
      {"gpu-1-mig-19-3", std::nullopt, std::nullopt, 0},
      {"gpu-1-mig-1g5gb-x-3", std::nullopt, std::nullopt, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto parsed = parseDraDeviceName(c.name);
    ASSERT_EQ(parsed.has_value(), c.gpu.has_value());
    if (!parsed) continue;
    EXPECT_EQ(parsed->gpu, *c.gpu);
    EXPECT_EQ(parsed->giProfileId, c.profileId);
    EXPECT_EQ(parsed->placementStart, c.start);
  }
}

TEST(DraDevicesTest, Quantities) {
  const std::pair<std::int64_t, const char*> cases[] = {{0, "0"},
                                                        {1, "1"},
                                                        {98, "98"},
                                                        {1024, "1Ki"},
                                                        {1536, "1536"},
                                                        {4864LL << 20, "4864Mi"},
                                                        {40LL << 30, "40Gi"},
                                                        {3LL << 29, "1536Mi"}};
  for (const auto& [value, text] : cases) EXPECT_EQ(binaryQuantity(value), text) << value;
}

TEST(DraDevicesTest, DeviceClassesOfTheChart) {
  const auto classes = draDeviceClasses();
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0]["metadata"]["name"], "gpu.nvidia.com");
  EXPECT_EQ(classes[0]["spec"]["extendedResourceName"], "nvidia.com/gpu");
  EXPECT_EQ(classes[0]["spec"]["selectors"][0]["cel"]["expression"],
            "device.driver == 'gpu.nvidia.com' && "
            "device.attributes['gpu.nvidia.com'].type == 'gpu'");
  EXPECT_EQ(classes[1]["metadata"]["name"], "mig.nvidia.com");
  EXPECT_FALSE(classes[1]["spec"].contains("extendedResourceName"));
  EXPECT_EQ(classes[1]["spec"]["selectors"][0]["cel"]["expression"],
            "device.driver == 'gpu.nvidia.com' && "
            "device.attributes['gpu.nvidia.com'].type == 'mig'");
}

TEST(DraDevicesTest, Validation) {
  GpuNodeSpec unknown = node("Acme-Accelerator", 16384, false);
  GpuNodeSpec described = unknown;
  described.dra->architecture = "Ampere";
  described.dra->cudaComputeCapability = "8.6";
  GpuNodeSpec nine = a100(9, true);
  const std::pair<GpuNodeSpec, bool> cases[] = {
      {nine, false},  // nine counter sets do not fit the driver's one counters slice
      {a100(), true},
      {node("NVIDIA-H100-80GB-HBM3", 81920, true), true},
      {node("Tesla-T4", 15360, false), true},
      {node("NVIDIA-A100-SXM4-80GB", 81920, true), false},  // no NVML listing
      {unknown, false},
      {described, true},
  };
  for (const auto& [spec, ok] : cases) {
    EXPECT_EQ(validateDra(spec).ok(), ok) << spec.product << ": " << validateDra(spec).message();
  }
}

}  // namespace dra_devices_test
}  // namespace gpuscale::sim
