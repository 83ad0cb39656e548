#include "gpuscale/adapter/resource_metrics_assembly.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace gpuscale::adapter {
namespace {

using apiserver::ContainerMetrics;
using apiserver::NodeMetrics;
using apiserver::PodMetrics;
using apiserver::Timestamp;

std::optional<int64_t> wholeUnits(double value, double scale) {
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  const double scaled = std::round(value * scale);
  // 2^63 is exactly representable; anything at or above it saturates.
  if (scaled >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(scaled);
}

std::string labelOf(const prom::Sample& sample, const std::string& label) {
  if (label.empty()) return {};
  const auto it = sample.metric.find(label);
  return it == sample.metric.end() ? std::string() : it->second;
}

// One resource's value of one container (or node), and when it was measured.
struct Reading {
  std::optional<core::Quantity> value;  // nullopt: the sample was not a valid number
  Timestamp at;
};

using PodKey = std::tuple<std::string, std::string>;  // namespace, pod

// Pod -> container -> reading, the last sample of a container winning.
std::map<PodKey, std::map<std::string, Reading>> podReadings(
    std::string_view namespaceName, const UsageSamples& usage,
    std::optional<core::Quantity> (*convert)(double)) {
  std::map<PodKey, std::map<std::string, Reading>> out;
  if (usage.samples == nullptr) return out;
  for (const prom::Sample& sample : *usage.samples) {
    std::string pod = labelOf(sample, usage.objectLabel);
    if (pod.empty()) continue;
    std::string ns = usage.namespaceLabel.empty() ? std::string(namespaceName)
                                                  : labelOf(sample, usage.namespaceLabel);
    if (ns.empty()) continue;
    out[{std::move(ns), std::move(pod)}][labelOf(sample, usage.containerLabel)] =
        Reading{convert(sample.point.value), sample.point.timestamp};
  }
  return out;
}

// Node -> reading, the first sample of a node winning.
std::map<std::string, Reading> nodeReadings(const UsageSamples& usage,
                                            std::optional<core::Quantity> (*convert)(double)) {
  std::map<std::string, Reading> out;
  if (usage.samples == nullptr) return out;
  for (const prom::Sample& sample : *usage.samples) {
    std::string node = labelOf(sample, usage.objectLabel);
    if (node.empty()) continue;
    out.try_emplace(std::move(node), Reading{convert(sample.point.value), sample.point.timestamp});
  }
  return out;
}

}  // namespace

std::optional<core::Quantity> cpuUsageQuantity(double cores) {
  auto nano = wholeUnits(cores, 1e9);
  if (!nano) return std::nullopt;
  return core::Quantity::fromNano(*nano);
}

std::optional<core::Quantity> memoryUsageQuantity(double bytes) {
  auto whole = wholeUnits(bytes, 1);
  if (!whole) return std::nullopt;
  return core::Quantity::fromInt(*whole, core::Quantity::Format::kBinarySI);
}

std::vector<PodMetrics> assemblePodMetrics(std::string_view namespaceName, const UsageSamples& cpu,
                                           const UsageSamples& memory, core::Duration window) {
  const auto cpuByPod = podReadings(namespaceName, cpu, cpuUsageQuantity);
  const auto memoryByPod = podReadings(namespaceName, memory, memoryUsageQuantity);
  std::vector<PodMetrics> out;
  for (const auto& [key, cpuContainers] : cpuByPod) {
    const auto memoryIt = memoryByPod.find(key);
    if (memoryIt == memoryByPod.end()) continue;
    const auto& memoryContainers = memoryIt->second;
    if (memoryContainers.size() != cpuContainers.size()) continue;
    PodMetrics pod;
    std::tie(pod.namespaceName, pod.name) = key;
    pod.window = window;
    pod.timestamp = Timestamp::max();
    bool complete = true;
    for (const auto& [container, cpuReading] : cpuContainers) {
      const auto memoryReading = memoryContainers.find(container);
      if (memoryReading == memoryContainers.end() || !cpuReading.value ||
          !memoryReading->second.value) {
        complete = false;
        break;
      }
      pod.containers.push_back(
          ContainerMetrics{container, {*cpuReading.value, *memoryReading->second.value}});
      pod.timestamp = std::min({pod.timestamp, cpuReading.at, memoryReading->second.at});
    }
    if (complete) out.push_back(std::move(pod));
  }
  return out;  // map order: namespace, then name; containers by name
}

std::vector<NodeMetrics> assembleNodeMetrics(const UsageSamples& cpu, const UsageSamples& memory,
                                             core::Duration window) {
  const auto cpuByNode = nodeReadings(cpu, cpuUsageQuantity);
  const auto memoryByNode = nodeReadings(memory, memoryUsageQuantity);
  std::vector<NodeMetrics> out;
  for (const auto& [name, cpuReading] : cpuByNode) {
    const auto memoryReading = memoryByNode.find(name);
    if (memoryReading == memoryByNode.end() || !cpuReading.value || !memoryReading->second.value) {
      continue;
    }
    NodeMetrics node;
    node.name = name;
    node.window = window;
    node.timestamp = std::min(cpuReading.at, memoryReading->second.at);
    node.usage = {*cpuReading.value, *memoryReading->second.value};
    out.push_back(std::move(node));
  }
  return out;
}

}  // namespace gpuscale::adapter
