// MIG geometries: which multisets of GPU-instance profiles one GPU can hold, derived from the placement rules
// of mig_catalog.h (slot starts and sizes, per-profile maximum counts, compute slices, the one-media-instance
// rule) rather than from hand-written lists.
//
// A geometry is a multiset of profile names ("1g.5gb" x 2, "2g.10gb" x 1, "3g.20gb" x 1). It is valid for a
// model when some non-overlapping placement of its instances exists. mig-parted applies a geometry by clearing
// the GPU and trying creation orders, so only the multiset matters to it; the witness placement tells the
// emulator where instances go.
//
// Thread safety: pure functions over immutable inputs.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/partition/mig_catalog.h"

namespace gpuscale::partition {

// Profile name -> instance count; counts are > 0 (zero entries are dropped by normalize()).
using MigGeometry = std::map<std::string, int>;

// One placed instance: profile name and first slot.
struct MigPlacement {
  std::string profile;
  int start = 0;
  int slots = 1;
  friend bool operator==(const MigPlacement&, const MigPlacement&) = default;
};

// "1g.5gb:2,2g.10gb:1,3g.20gb:1"; "" for the empty geometry.
std::string formatGeometry(const MigGeometry& g);
// Parses formatGeometry()'s output ("" is the empty geometry); counts must be positive integers.
core::Result<MigGeometry> parseGeometry(std::string_view text);
// Number of instances in `g`.
int instanceCount(const MigGeometry& g);

// A placement of every instance of `g` on one GPU of `model` that obeys the placement rules, or nullopt when
// `g` is not valid for `model` (unknown profile, too many instances, overlapping slots, too many compute
// slices). Placements are sorted by start slot.
std::optional<std::vector<MigPlacement>> placeGeometry(const GpuModel& model, const MigGeometry& g);
inline bool isValidGeometry(const GpuModel& model, const MigGeometry& g) {
  return placeGeometry(model, g).has_value();
}

// Which profiles enumeration may use. Empty `profiles` means every profile of the model; `baseOnly` drops the
// media/graphics variants ("+me", "-me", "+gfx", ...).
struct ProfileFilter {
  std::set<std::string> profiles;
  bool baseOnly = false;
  bool allows(const MigProfile& p) const;
};

// Every valid non-empty geometry of `model` using only profiles allowed by `filter`, found by walking all
// non-overlapping placements. Sorted by formatGeometry() for determinism.
std::vector<MigGeometry> enumerateGeometries(const GpuModel& model, const ProfileFilter& filter = {});

// The geometries from enumerateGeometries() to which no allowed instance can be added (maximal layouts).
std::vector<MigGeometry> maximalGeometries(const GpuModel& model, const ProfileFilter& filter = {});

}  // namespace gpuscale::partition
