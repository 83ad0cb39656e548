#include "gpuscale/sim/dcgm_exposition.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <tuple>

#include <fmt/format.h>

#include "gpuscale/sim/gpu_identity.h"
#include "gpuscale/sim/text_exposition.h"

namespace gpuscale::sim {
namespace {

using LabelList = std::vector<std::pair<std::string, std::string>>;

// One device as dcgm-exporter reports it.
struct DcgmDevice {
  LabelList labels;
  bool mig = false;
  double busy = 0;
  double memoryMiB = 0;
  bool held = false;
};

struct DcgmFamily {
  std::string_view name;
  std::string_view help;
  bool wholeGpuOnly;
  std::function<double(const DcgmDevice&)> value;
};

double usedMiB(const DcgmDevice& d) { return d.held ? d.memoryMiB / 2 : 0; }

const std::vector<DcgmFamily>& dcgmFamilies() {
  // HELP texts as dcgm-exporter's default counters file words them.
  static const std::vector<DcgmFamily> kFamilies = {
      {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", true,
       [](const DcgmDevice& d) { return std::round(d.busy * 100); }},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", false,
       [](const DcgmDevice& d) { return d.busy; }},
      {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", false, usedMiB},
      {"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", false,
       [](const DcgmDevice& d) { return d.memoryMiB - usedMiB(d); }},
  };
  return kFamilies;
}

// The pod reported for `device`: the first holder by namespace/name.
const PodDevice* holderOf(const NodeGpuView& node, const std::string& device) {
  const PodDevice* out = nullptr;
  for (const PodDevice& p : node.pods) {
    if (p.device != device) continue;
    if (out == nullptr ||
        std::tie(p.namespaceName, p.name) < std::tie(out->namespaceName, out->name))
      out = &p;
  }
  return out;
}

void addDevices(const NodeGpuView& node, const std::map<std::string, double>& busy,
                std::vector<DcgmDevice>& out) {
  for (int g = 0; g < static_cast<int>(node.gpus.size()); ++g) {
    const partition::MigGpuSetting& gpu = node.gpus[g];
    const LabelList gpuLabels = {
        {"gpu", std::to_string(g)},
        {"UUID", gpuUuid(node.spec.name, g)},
        {"pci_bus_id", fmt::format("00000000:{:02X}:00.0", pciBusNumber(g))},
        {"device", fmt::format("nvidia{}", g)},
        {"modelName", nvmlProductName(node.spec.product)}};
    const auto config = node.devicePluginConfig ? &*node.devicePluginConfig : nullptr;
    int instanceId = 0;
    for (const auto& [resource, count] : physicalDevices(node.spec, gpu, config)) {
      const partition::MigProfile* profile = deviceProfile(node.spec, gpu, resource);
      for (std::int64_t k = 0; k < count; ++k) {
        const std::string key = deviceKey(node.spec.name, g, resource, k);
        DcgmDevice d;
        d.labels = gpuLabels;
        d.mig = gpu.migEnabled;
        if (profile != nullptr) {
          d.labels.emplace_back("GPU_I_PROFILE", profile->name);
          d.labels.emplace_back("GPU_I_ID", std::to_string(++instanceId));
          d.memoryMiB = profile->memoryGb * 1024.0;
        } else {
          d.memoryMiB = static_cast<double>(node.spec.memoryMiB);
        }
        d.labels.emplace_back("Hostname", node.spec.name);
        if (const PodDevice* pod = holderOf(node, key)) {
          d.held = true;
          d.labels.emplace_back("container", pod->container);
          d.labels.emplace_back("namespace", pod->namespaceName);
          d.labels.emplace_back("pod", pod->name);
        }
        if (auto it = busy.find(key); it != busy.end()) d.busy = it->second;
        out.push_back(std::move(d));
      }
    }
  }
}

}  // namespace

std::string renderDcgmSeries(const std::vector<NodeGpuView>& nodes,
                             const std::map<std::string, double>& busy) {
  std::vector<DcgmDevice> devices;
  for (const NodeGpuView& node : nodes) {
    if (!node.operandsPaused) addDevices(node, busy, devices);
  }
  std::string out;
  for (const DcgmFamily& family : dcgmFamilies()) {
    std::string lines;
    for (const DcgmDevice& d : devices) {
      if (family.wholeGpuOnly && d.mig) continue;
      lines += fmt::format("{}{} {}\n", family.name, formatLabelSet(d.labels),
                           formatSampleValue(family.value(d)));
    }
    if (!lines.empty()) out += formatFamilyHeader(family.name, "gauge", family.help) + lines;
  }
  return out;
}

}  // namespace gpuscale::sim
