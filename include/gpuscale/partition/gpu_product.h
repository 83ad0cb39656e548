// GPU Feature Discovery's product labels, and node selection that survives GFD's renames.
//
// GFD writes `nvidia.com/gpu.product` (and, under the mixed MIG strategy, one
// `nvidia.com/mig-<profile>.product` per profile) as
//   <model>                        a whole GPU, not shared          Tesla-T4
//   <model>-SHARED                 time-slicing or MPS replicas > 1 Tesla-T4-SHARED
//                                  (renameByDefault false)
//   <model>-MIG-<profile>          single strategy (gpu.product), or a mixed per-profile label
//                                                                   A100-SXM4-40GB-MIG-1g.5gb
//   <model>-MIG-<profile>-SHARED   the same, time-sliced
// The `-SHARED` suffix follows the replicas of the resource the label describes: `nvidia.com/gpu`
// for gpu.product, `nvidia.com/mig-<profile>` for mig-<profile>.product.
//
// So a raise of time-slicing renames the product, and a selector written as an exact match stops
// matching (or never matches until the raise). Two readings of a selector follow:
//   - the reconciler's own scope (policy nodeSelector) names a model: `Tesla-T4` or
//     `Tesla-T4-SHARED` select every T4 node whatever its sharing; a selector naming a MIG profile
//     also requires that profile.
//   - a pod's nodeSelector is matched exactly by the scheduler: the reconciler treats a node whose
//     product differs only by the rename as a node the pods can land on once the sharing matches
//     (a ProductPin), and never changes sharing in a way that breaks the pin.
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale::partition {

struct GpuProduct {
  std::string model;       // "Tesla-T4", "NVIDIA-A100-SXM4-40GB"
  std::string migProfile;  // "" unless "-MIG-<profile>"
  bool shared = false;     // "-SHARED"
  friend bool operator==(const GpuProduct&, const GpuProduct&) = default;
};

// Splits a product label value; a value without GFD's suffixes is all model.
GpuProduct parseGpuProduct(std::string_view value);
// The label value GFD writes for `product`; formatGpuProduct(parseGpuProduct(v)) == v.
std::string formatGpuProduct(const GpuProduct& product);

// The resource whose sharing a product label key reports: "nvidia.com/gpu" for
// nvidia.com/gpu.product, "nvidia.com/mig-1g.5gb" for nvidia.com/mig-1g.5gb.product; nullopt for
// any other key.
std::optional<std::string> productLabelResource(std::string_view key);

// A policy selector value against a node's label value: same model, and the same MIG profile when
// the selector names one; sharing ignored on both sides.
bool sameGpuModel(std::string_view selector, std::string_view label);

// Every pair of `selector` holds in `labels`, product labels compared with sameGpuModel, other
// keys exactly. This is how policy nodeSelectors select nodes.
bool selectsAcrossRenames(const std::map<std::string, std::string>& selector,
                          const std::map<std::string, std::string>& labels);

// What a pod's nodeSelector requires of a product label beyond the model: the sharing of
// `resource` (replicas > 1 or not) and, when set, the MIG profile.
struct ProductPin {
  std::string key;       // the label, e.g. nvidia.com/gpu.product
  std::string resource;  // whose replicas decide "-SHARED"
  GpuProduct product;
  friend bool operator==(const ProductPin&, const ProductPin&) = default;
};

// The product pins of a pod nodeSelector, in key order.
std::vector<ProductPin> productPins(const std::map<std::string, std::string>& nodeSelector);

// Whether a node will carry the pinned label value when `resource`'s replicas are `replicas`
// (the node's label tells model and MIG profile; the replicas tell "-SHARED").
bool pinHolds(const ProductPin& pin, std::string_view nodeLabel, int replicas);

}  // namespace gpuscale::partition
