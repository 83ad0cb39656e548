#include "gpuscale/sim/dra_devices.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

#include <fmt/format.h>

#include "gpuscale/partition/mig_catalog.h"
#include "gpuscale/partition/mig_geometry.h"
#include "gpuscale/sim/gpu_identity.h"
#include "gpuscale/sim/nvml_mig_profiles.h"

namespace gpuscale::sim {
namespace {

using kube::Object;
using partition::MigGpuSetting;

struct GpuFacts {
  std::string architecture;
  std::string computeCapability;
};

// Architecture and compute capability by product family, as NVML reports them.
std::optional<GpuFacts> factsOf(const GpuNodeSpec& spec) {
  const DraSpec& dra = *spec.dra;
  if (!dra.architecture.empty() && !dra.cudaComputeCapability.empty())
    return GpuFacts{dra.architecture, dra.cudaComputeCapability};
  static const std::vector<std::pair<std::string_view, GpuFacts>> kFamilies = {
      {"A100", {"Ampere", "8.0"}},     {"A800", {"Ampere", "8.0"}}, {"A30", {"Ampere", "8.0"}},
      {"H100", {"Hopper", "9.0"}},     {"H800", {"Hopper", "9.0"}}, {"H200", {"Hopper", "9.0"}},
      {"B200", {"Blackwell", "10.0"}}, {"T4", {"Turing", "7.5"}},   {"L4", {"Ada Lovelace", "8.9"}},
  };
  const std::string product = "-" + spec.product + "-";
  for (const auto& [token, facts] : kFamilies) {
    if (product.find(fmt::format("-{}-", token)) == std::string::npos) continue;
    GpuFacts out = facts;
    if (!dra.architecture.empty()) out.architecture = dra.architecture;
    if (!dra.cudaComputeCapability.empty()) out.computeCapability = dra.cudaComputeCapability;
    return out;
  }
  return std::nullopt;
}

// A dotted version as the driver publishes it (semver: "8.0" -> "8.0.0", "580.95.05" ->
// "580.95.5").
std::string semver(std::string_view v) {
  std::vector<int> parts;
  while (!v.empty() && parts.size() < 3) {
    auto dot = v.find('.');
    std::string_view part = v.substr(0, dot);
    int n = 0;
    std::from_chars(part.data(), part.data() + part.size(), n);
    parts.push_back(n);
    v = dot == std::string_view::npos ? std::string_view{} : v.substr(dot + 1);
  }
  while (parts.size() < 3) parts.push_back(0);
  return fmt::format("{}.{}.{}", parts[0], parts[1], parts[2]);
}

Object str(std::string_view s) { return {{"string", s}}; }
Object ver(std::string_view s) { return {{"version", semver(s)}}; }
Object quantity(std::int64_t v) { return {{"value", binaryQuantity(v)}}; }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The driver's profile part of a MIG device name: dots removed, then made an RFC 1123 label.
std::string nameOfProfile(std::string_view profile) {
  std::string out;
  for (char c : lower(std::string(profile))) {
    if (c == '.') continue;
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '-';
  }
  const auto first = out.find_first_not_of('-');
  const auto last = out.find_last_not_of('-');
  return first == std::string::npos ? "" : out.substr(first, last - first + 1);
}

// "copyEngines" -> "copy-engines": counter names are the capacities' in kebab-case.
std::string kebab(std::string_view camel) {
  std::string out;
  for (char c : camel) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      out += '-';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

// The attributes a MIG device shares with its parent GPU, and the GPU's own.
Object parentAttributes(const GpuNodeSpec& spec, const GpuFacts& facts, int gpu) {
  const DraSpec& dra = *spec.dra;
  return {
      {"productName",
       str(dra.productName.empty() ? nvmlProductName(spec.product) : dra.productName)},
      {"brand", str(dra.brand)},
      {"architecture", str(facts.architecture)},
      {"cudaComputeCapability", ver(facts.computeCapability)},
      {"driverVersion", ver(dra.driverVersion)},
      {"cudaDriverVersion", ver(dra.cudaDriverVersion)},
      {"resource.kubernetes.io/pciBusID", str(fmt::format("0000:{:02x}:00.0", pciBusNumber(gpu)))},
      {"resource.kubernetes.io/pcieRoot", str(fmt::format("pci0000:{:02x}", (gpu / 4) * 0x80))},
  };
}

// Capacities of a MIG profile, camelCase as the driver publishes them (values: counts, bytes).
std::vector<std::pair<std::string, std::int64_t>> profileCapacities(
    const NvmlGpuInstanceProfile& p) {
  return {{"multiprocessors", p.multiprocessors},
          {"copyEngines", p.copyEngines},
          {"decoders", p.decoders},
          {"encoders", p.encoders},
          {"jpegEngines", p.jpegEngines},
          {"ofaEngines", p.ofaEngines},
          {"memory", p.memoryMiB * 1024 * 1024}};
}

std::string migDeviceName(int gpu, const NvmlGpuInstanceProfile& p, int start) {
  return fmt::format("gpu-{}-mig-{}-{}-{}", gpu, nameOfProfile(p.name), p.id, start);
}

Object migDevice(const GpuNodeSpec& spec, const GpuFacts& facts, int gpu,
                 const NvmlGpuInstanceProfile& p, int start) {
  Object attrs = parentAttributes(spec, facts, gpu);
  attrs["type"] = str("mig");
  attrs["parentUUID"] = str(gpuUuid(spec.name, gpu));
  attrs["profile"] = str(p.name);
  Object capacity = Object::object();
  for (const auto& [name, v] : profileCapacities(p)) capacity[name] = quantity(v);
  return {{"name", migDeviceName(gpu, p, start)},
          {"attributes", std::move(attrs)},
          {"capacity", std::move(capacity)}};
}

Object wholeGpu(const GpuNodeSpec& spec, const GpuFacts& facts, int gpu) {
  Object attrs = parentAttributes(spec, facts, gpu);
  attrs["type"] = str("gpu");
  attrs["uuid"] = str(gpuUuid(spec.name, gpu));
  return {{"name", fmt::format("gpu-{}", gpu)},
          {"attributes", std::move(attrs)},
          {"capacity", {{"memory", quantity(spec.memoryMiB * 1024 * 1024)}}}};
}

void sortByName(Object& devices) {
  std::sort(devices.begin(), devices.end(), [](const Object& a, const Object& b) {
    return a["name"].get<std::string>() < b["name"].get<std::string>();
  });
}

// Static MIG: the devices that exist, one slice.
std::vector<DraSlice> staticSlices(const GpuNodeSpec& spec, const GpuFacts& facts,
                                   const std::vector<MigGpuSetting>& gpus) {
  const partition::GpuModel* model = partition::matchModel(spec.product, spec.memoryMiB);
  DraSlice slice;
  for (int g = 0; g < spec.gpus; ++g) {
    const bool mig = g < static_cast<int>(gpus.size()) && gpus[g].migEnabled && model != nullptr;
    if (!mig) {
      slice.devices.push_back(wholeGpu(spec, facts, g));
      continue;
    }
    auto placed = partition::placeGeometry(*model, gpus[g].geometry);
    if (!placed) continue;
    for (const auto& inst : *placed) {
      const NvmlGpuInstanceProfile* p = nvmlGpuInstanceProfile(model->name, inst.profile);
      if (p == nullptr) continue;
      Object dev = migDevice(spec, facts, g, *p, inst.start);
      dev["attributes"]["uuid"] = str(migUuid(spec.name, g, inst.profile, inst.start));
      for (int s = inst.start; s < inst.start + inst.slots; ++s)
        dev["capacity"][fmt::format("memorySlice{}", s)] = quantity(1);
      slice.devices.push_back(std::move(dev));
    }
  }
  sortByName(slice.devices);
  return {std::move(slice)};
}

Object counters(const std::map<std::string, std::int64_t>& values, int firstSlot, int slots) {
  Object out = Object::object();
  for (const auto& [name, v] : values) out[kebab(name)] = quantity(v);
  for (int s = firstSlot; s < firstSlot + slots; ++s)
    out[fmt::format("memory-slice-{}", s)] = quantity(1);
  return out;
}

// DynamicMIG: per GPU its devices and its counter set.
std::vector<DraSlice> dynamicSlices(const GpuNodeSpec& spec, const GpuFacts& facts,
                                    const partition::GpuModel& model,
                                    const std::vector<MigGpuSetting>& gpus, bool splitCounters) {
  std::map<std::string, std::int64_t> maxCapacity;
  for (const auto& p : *nvmlGpuInstanceProfiles(model.name)) {
    for (const auto& [name, v] : profileCapacities(p))
      maxCapacity[name] = std::max(maxCapacity[name], v);
  }
  const bool resetToToggle = facts.architecture == "Ampere";
  std::vector<DraSlice> out;
  DraSlice countersSlice;
  for (int g = 0; g < spec.gpus; ++g) {
    const std::string counterSet = fmt::format("gpu-{}-counter-set", g);
    DraSlice slice;
    const bool migOn = g < static_cast<int>(gpus.size()) && gpus[g].migEnabled;
    if (!(migOn && resetToToggle)) {
      Object whole = wholeGpu(spec, facts, g);
      whole["capacity"] = Object::object();
      for (const auto& [name, v] : maxCapacity) whole["capacity"][name] = quantity(v);
      whole["consumesCounters"] = {
          {{"counterSet", counterSet}, {"counters", counters(maxCapacity, 0, model.slots)}}};
      slice.devices.push_back(std::move(whole));
    }
    for (const auto& profile : model.profiles) {
      const NvmlGpuInstanceProfile* p = nvmlGpuInstanceProfile(model.name, profile.name);
      if (p == nullptr) continue;
      std::map<std::string, std::int64_t> own;
      for (const auto& [name, v] : profileCapacities(*p)) own[name] = v;
      for (int start : profile.starts) {
        Object dev = migDevice(spec, facts, g, *p, start);
        dev["consumesCounters"] = {
            {{"counterSet", counterSet}, {"counters", counters(own, start, profile.slots)}}};
        slice.devices.push_back(std::move(dev));
      }
    }
    sortByName(slice.devices);
    Object set = {{"name", counterSet}, {"counters", counters(maxCapacity, 0, model.slots)}};
    if (splitCounters) {
      countersSlice.sharedCounters.push_back(std::move(set));
    } else {
      slice.sharedCounters.push_back(std::move(set));
    }
    out.push_back(std::move(slice));
  }
  if (splitCounters) out.insert(out.begin(), std::move(countersSlice));
  return out;
}

}  // namespace

std::vector<kube::Object> draDeviceClasses() {
  auto deviceClass = [](std::string_view name, std::string_view type) {
    return Object{
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "DeviceClass"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"selectors",
           {{{"cel",
              {{"expression",
                fmt::format("device.driver == '{}' && device.attributes['{}'].type == '{}'",
                            kDraDriver, kDraDriver, type)}}}}}}}}};
  };
  Object gpu = deviceClass("gpu.nvidia.com", "gpu");
  gpu["spec"]["extendedResourceName"] = "nvidia.com/gpu";
  return {std::move(gpu), deviceClass("mig.nvidia.com", "mig")};
}

core::Status validateDra(const GpuNodeSpec& spec) {
  if (!spec.dra) return {};
  if (!factsOf(spec)) {
    return core::Status::invalid(
        fmt::format("node {}: dra needs architecture and cudaComputeCapability for \"{}\"",
                    spec.name, spec.product));
  }
  if (!spec.migCapable) return {};
  if (spec.dra->dynamicMig && spec.gpus > 8) {
    // The driver puts every counter set in one slice, which holds at most 8.
    return core::Status::invalid(
        fmt::format("node {}: dynamicMig publishes at most 8 GPUs per node", spec.name));
  }
  const partition::GpuModel* model = partition::matchModel(spec.product, spec.memoryMiB);
  if (model == nullptr || nvmlGpuInstanceProfiles(model->name) == nullptr) {
    return core::Status::invalid(
        fmt::format("node {}: no NVML MIG profile listing for \"{}\" (known: A100-40GB, H100-80GB)",
                    spec.name, spec.product));
  }
  return {};
}

std::vector<DraSlice> draSlices(const GpuNodeSpec& spec, const std::vector<MigGpuSetting>& gpus,
                                bool splitCounters) {
  const GpuFacts facts = *factsOf(spec);
  const partition::GpuModel* model =
      spec.migCapable ? partition::matchModel(spec.product, spec.memoryMiB) : nullptr;
  if (spec.dra->dynamicMig && model != nullptr)
    return dynamicSlices(spec, facts, *model, gpus, splitCounters);
  return staticSlices(spec, facts, gpus);
}

std::optional<DraDeviceName> parseDraDeviceName(std::string_view name) {
  auto number = [](std::string_view text) -> std::optional<int> {
    int v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return v;
  };
  if (!name.starts_with("gpu-")) return std::nullopt;
  name.remove_prefix(4);
  const auto dash = name.find('-');
  auto gpu = number(name.substr(0, dash));
  if (!gpu) return std::nullopt;
  if (dash == std::string_view::npos) return DraDeviceName{*gpu, std::nullopt, 0};
  std::string_view rest = name.substr(dash);
  if (!rest.starts_with("-mig-")) return std::nullopt;
  const auto last = rest.rfind('-');
  const auto prev = rest.rfind('-', last - 1);
  if (prev <= 4) return std::nullopt;
  auto id = number(rest.substr(prev + 1, last - prev - 1));
  auto start = number(rest.substr(last + 1));
  if (!id || !start) return std::nullopt;
  return DraDeviceName{*gpu, *id, *start};
}

std::string binaryQuantity(std::int64_t value) {
  constexpr std::int64_t kKi = 1024, kMi = kKi * 1024, kGi = kMi * 1024;
  if (value != 0 && value % kGi == 0) return fmt::format("{}Gi", value / kGi);
  if (value != 0 && value % kMi == 0) return fmt::format("{}Mi", value / kMi);
  if (value != 0 && value % kKi == 0) return fmt::format("{}Ki", value / kKi);
  return std::to_string(value);
}

}  // namespace gpuscale::sim
