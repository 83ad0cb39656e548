#include "gpuscale/partition/gpu_product.h"

#include <algorithm>

#include "gpuscale/partition/resource_names.h"

namespace gpuscale::partition {
namespace {

constexpr std::string_view kShared = "-SHARED";
constexpr std::string_view kMig = "-MIG-";
constexpr std::string_view kGpuProductKey = "nvidia.com/gpu.product";
constexpr std::string_view kProductSuffix = ".product";

}  // namespace

GpuProduct parseGpuProduct(std::string_view value) {
  GpuProduct out;
  if (value.ends_with(kShared)) {
    out.shared = true;
    value.remove_suffix(kShared.size());
  }
  // Model names do not contain "-MIG-"; the last one starts the profile.
  if (auto at = value.rfind(kMig); at != std::string_view::npos && at > 0) {
    out.migProfile = std::string(value.substr(at + kMig.size()));
    value = value.substr(0, at);
  }
  out.model = std::string(value);
  return out;
}

std::string formatGpuProduct(const GpuProduct& product) {
  std::string out = product.model;
  if (!product.migProfile.empty()) out.append(kMig).append(product.migProfile);
  if (product.shared) out.append(kShared);
  return out;
}

std::optional<std::string> productLabelResource(std::string_view key) {
  if (key == kGpuProductKey) return "nvidia.com/gpu";
  if (key.starts_with(kMigResourcePrefix) && key.ends_with(kProductSuffix) &&
      key.size() > kMigResourcePrefix.size() + kProductSuffix.size()) {
    key.remove_suffix(kProductSuffix.size());
    return std::string(key);
  }
  return std::nullopt;
}

bool sameGpuModel(std::string_view selector, std::string_view label) {
  const GpuProduct want = parseGpuProduct(selector);
  const GpuProduct have = parseGpuProduct(label);
  return want.model == have.model &&
         (want.migProfile.empty() || want.migProfile == have.migProfile);
}

bool selectsAcrossRenames(const std::map<std::string, std::string>& selector,
                          const std::map<std::string, std::string>& labels) {
  return std::all_of(selector.begin(), selector.end(), [&](const auto& kv) {
    auto it = labels.find(kv.first);
    if (it == labels.end()) return false;
    if (productLabelResource(kv.first)) return sameGpuModel(kv.second, it->second);
    return it->second == kv.second;
  });
}

std::vector<ProductPin> productPins(const std::map<std::string, std::string>& nodeSelector) {
  std::vector<ProductPin> out;
  for (const auto& [key, value] : nodeSelector) {
    if (auto resource = productLabelResource(key)) {
      out.push_back({key, *resource, parseGpuProduct(value)});
    }
  }
  return out;
}

bool pinHolds(const ProductPin& pin, std::string_view nodeLabel, int replicas) {
  GpuProduct have = parseGpuProduct(nodeLabel);
  have.shared = replicas > 1;
  return have == pin.product;
}

}  // namespace gpuscale::partition
