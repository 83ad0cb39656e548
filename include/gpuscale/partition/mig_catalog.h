// The catalog of MIG-capable GPU models: profiles, placement slots and instance limits per model, and how a
// node's GPU Operator labels map to a model.
//
// This is the single source of MIG facts for the planner and for the GPU-side emulator. Each profile says how
// many memory slots it occupies, at which slot indices it may start (what `nvidia-smi mig -lgipp` prints as
// `{starts}:size`), how many compute slices it takes and how many instances of it a GPU can hold. Geometry
// enumeration (mig_geometry.h) derives every valid layout from these placement rules.
//
// Profile names follow the GPU Operator's default mig-parted config. Drivers may report other names for the
// same shape (e.g. `3g.39gb`); the catalog does not guess those.
//
// Thread safety: the catalog is immutable static data; every function here is safe to call concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale::partition {

// One GPU-instance profile of one model.
struct MigProfile {
  std::string name;         // "1g.5gb", "1g.5gb+me"
  int slots = 1;            // memory slots occupied (placement size)
  int computeSlices = 1;    // the "Ng" of the name
  std::vector<int> starts;  // slot indices where an instance may start
  int maxCount = 1;         // instances of this profile one GPU can hold
  int memoryGb = 0;         // the "M" of "Ng.Mgb"
  // True for the plain profile; false for media/graphics variants ("+me", "+me.all", "-me", "+gfx").
  bool base = true;
  // True for variants holding media engines ("+me", "+me.all"): at most one such instance per GPU.
  bool mediaExtension = false;
};

// One MIG-capable GPU model.
struct GpuModel {
  std::string name;                   // catalog key, e.g. "A100-40GB"
  std::vector<std::string> families;  // product tokens, e.g. {"A100", "A800"}
  std::vector<std::string> markers;   // product tokens that pick this model among a family (e.g. "NVL")
  int memoryGb = 0;                   // nominal memory, used to pick among a family
  std::vector<std::uint32_t> pciIds;  // device<<16|vendor, as mig-parted `device-filter` spells them
  int slots = 8;                      // memory placement slots
  int computeSlices = 7;              // SM slices
  int maxInstances = 7;               // instances per GPU, all profiles together
  bool verified = true;  // false when the reference marks the data as inconsistent (verify on hardware)
  std::vector<MigProfile> profiles;

  const MigProfile* profile(std::string_view profileName) const;
};

// Every model in the catalog, in a fixed order.
const std::vector<GpuModel>& migCatalog();

// The model with catalog name `name`, or nullptr.
const GpuModel* findModelByName(std::string_view name);

// The model named by a `nvidia.com/gpu.product` label value (e.g. "NVIDIA-A100-SXM4-40GB",
// "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "NVIDIA-H100-NVL-SHARED"), using `memoryMiB` (the
// `nvidia.com/gpu.memory` label of a whole GPU) to tell apart models of one family when the product name does
// not. Pass nullopt when the memory label describes a MIG device (single strategy). nullptr when the product is
// not MIG-capable (e.g. Tesla-T4) or the model cannot be told apart.
const GpuModel* matchModel(std::string_view product, std::optional<std::int64_t> memoryMiB);

// The model with PCI device id `pciId` (e.g. 0x20B010DE), or nullptr.
const GpuModel* findModelByPciId(std::uint32_t pciId);

// "0x20B010DE" for 0x20B010DE.
std::string formatPciId(std::uint32_t pciId);

// Parses "0x20B010DE" / "0x20b010de"; nullopt when malformed.
std::optional<std::uint32_t> parsePciId(std::string_view text);

}  // namespace gpuscale::partition
