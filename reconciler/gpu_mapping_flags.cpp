#include "gpu_mapping_flags.h"

#include <sstream>
#include <vector>

#include "gpuscale/core/duration.h"

namespace gpuscale::reconciler {
namespace {

std::vector<std::string> splitComma(const std::string& text) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, ',')) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

}  // namespace

std::optional<bool> applyGpuMappingFlag(std::string& mapping, DcgmMappingOptions& dcgm,
                                        std::string_view name, const std::string& value) {
  if (name == "gpu-mapping") {
    mapping = value;
    return value == "node" || value == "dcgm";
  }
  if (name == "dcgm-max-age") {
    auto d = core::parseGoDuration(value);
    if (!d || d->count() <= 0) return false;
    dcgm.maxAge = std::chrono::duration_cast<std::chrono::seconds>(*d);
    return dcgm.maxAge.count() > 0;
  }
  if (name == "dcgm-settle") {
    auto d = core::parseGoDuration(value);
    if (!d || d->count() < 0) return false;
    dcgm.settle = std::chrono::duration_cast<std::chrono::seconds>(*d);
    return true;
  }
  if (name == "dcgm-utilization-metric") {
    dcgm.utilizationMetric = value;  // "": no utilisation
    return true;
  }
  std::string* field = nullptr;
  if (name == "dcgm-metric") field = &dcgm.metric;
  if (name == "dcgm-gpu-label") field = &dcgm.gpuLabel;
  if (name == "dcgm-pod-label") field = &dcgm.podLabel;
  if (name == "dcgm-namespace-label") field = &dcgm.namespaceLabel;
  if (field != nullptr) {
    *field = value;
    return !value.empty();
  }
  if (name == "dcgm-node-labels") {
    dcgm.nodeLabels = splitComma(value);
    return !dcgm.nodeLabels.empty();
  }
  return std::nullopt;
}

}  // namespace gpuscale::reconciler
