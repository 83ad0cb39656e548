#include "gpuscale/partition/mig_geometry.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace gpuscale::partition {
namespace {

// Depth-first walk over slots in increasing order: at each slot either leave it empty or start an allowed
// instance there. Each set of placements is visited exactly once.
class PlacementWalker {
 public:
  PlacementWalker(const GpuModel& model, std::vector<const MigProfile*> profiles)
      : model_(model), profiles_(std::move(profiles)), counts_(profiles_.size(), 0) {}

  // Calls visit(counts) for every non-empty placement set; stops early when visit returns true.
  template <typename Visit>
  bool walk(Visit&& visit) {
    return step(0, 0, visit);
  }

  const std::vector<int>& counts() const { return counts_; }
  const std::vector<MigPlacement>& placed() const { return placed_; }

 private:
  template <typename Visit>
  bool step(int slot, unsigned used, Visit& visit) {
    if (slot >= model_.slots) return !placed_.empty() && visit(counts_);
    if (step(slot + 1, used, visit)) return true;
    if (used & (1u << slot)) return false;
    for (std::size_t i = 0; i < profiles_.size(); ++i) {
      const MigProfile& p = *profiles_[i];
      if (!fits(p, slot, used)) continue;
      unsigned mask = ((1u << p.slots) - 1u) << slot;
      ++counts_[i];
      compute_ += p.computeSlices;
      media_ += p.mediaExtension ? 1 : 0;
      placed_.push_back({p.name, slot, p.slots});
      bool stop = step(slot + p.slots, used | mask, visit);
      placed_.pop_back();
      media_ -= p.mediaExtension ? 1 : 0;
      compute_ -= p.computeSlices;
      --counts_[i];
      if (stop) return true;
    }
    return false;
  }

  bool fits(const MigProfile& p, int slot, unsigned used) const {
    if (std::find(p.starts.begin(), p.starts.end(), slot) == p.starts.end()) return false;
    if (slot + p.slots > model_.slots) return false;
    unsigned mask = ((1u << p.slots) - 1u) << slot;
    if (used & mask) return false;
    return countOf(p) < p.maxCount && compute_ + p.computeSlices <= model_.computeSlices &&
           static_cast<int>(placed_.size()) < model_.maxInstances &&
           !(p.mediaExtension && media_ > 0);
  }

  int countOf(const MigProfile& p) const {
    for (std::size_t i = 0; i < profiles_.size(); ++i) {
      if (profiles_[i] == &p) return counts_[i];
    }
    return 0;
  }

  const GpuModel& model_;
  std::vector<const MigProfile*> profiles_;
  std::vector<int> counts_;
  std::vector<MigPlacement> placed_;
  int compute_ = 0;
  int media_ = 0;
};

MigGeometry toGeometry(const std::vector<const MigProfile*>& profiles, const std::vector<int>& counts) {
  MigGeometry g;
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    if (counts[i] > 0) g[profiles[i]->name] = counts[i];
  }
  return g;
}

std::vector<const MigProfile*> allowedProfiles(const GpuModel& model, const ProfileFilter& filter) {
  std::vector<const MigProfile*> out;
  for (const auto& p : model.profiles) {
    if (filter.allows(p)) out.push_back(&p);
  }
  return out;
}

}  // namespace

std::string formatGeometry(const MigGeometry& g) {
  std::string out;
  for (const auto& [name, count] : g) {
    if (count <= 0) continue;
    if (!out.empty()) out += ',';
    out += fmt::format("{}:{}", name, count);
  }
  return out;
}

core::Result<MigGeometry> parseGeometry(std::string_view text) {
  MigGeometry g;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    auto colon = item.rfind(':');
    int count = 0;
    if (colon == std::string_view::npos || colon == 0) {
      return core::Status::invalid(fmt::format("geometry item \"{}\" is not profile:count", item));
    }
    auto digits = item.substr(colon + 1);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || count <= 0) {
      return core::Status::invalid(fmt::format("geometry item \"{}\" has no positive count", item));
    }
    g[std::string(item.substr(0, colon))] += count;
  }
  return g;
}

int instanceCount(const MigGeometry& g) {
  int n = 0;
  for (const auto& [name, count] : g) n += count;
  return n;
}

bool ProfileFilter::allows(const MigProfile& p) const {
  if (baseOnly && !p.base) return false;
  return profiles.empty() || profiles.count(p.name) > 0;
}

std::optional<std::vector<MigPlacement>> placeGeometry(const GpuModel& model, const MigGeometry& g) {
  std::vector<const MigProfile*> profiles;
  std::vector<int> wanted;
  for (const auto& [name, count] : g) {
    if (count <= 0) continue;
    const MigProfile* p = model.profile(name);
    if (p == nullptr || count > p->maxCount) return std::nullopt;
    profiles.push_back(p);
    wanted.push_back(count);
  }
  if (profiles.empty()) return std::vector<MigPlacement>{};
  PlacementWalker walker(model, profiles);
  std::optional<std::vector<MigPlacement>> found;
  walker.walk([&](const std::vector<int>& counts) {
    if (counts != wanted) return false;
    found = walker.placed();
    return true;
  });
  return found;
}

std::vector<MigGeometry> enumerateGeometries(const GpuModel& model, const ProfileFilter& filter) {
  auto profiles = allowedProfiles(model, filter);
  if (profiles.empty()) return {};
  std::set<std::vector<int>> seen;
  PlacementWalker walker(model, profiles);
  walker.walk([&](const std::vector<int>& counts) {
    seen.insert(counts);
    return false;
  });
  std::vector<MigGeometry> out;
  for (const auto& counts : seen) out.push_back(toGeometry(profiles, counts));
  std::sort(out.begin(), out.end(), [](const MigGeometry& a, const MigGeometry& b) {
    return formatGeometry(a) < formatGeometry(b);
  });
  return out;
}

std::vector<MigGeometry> maximalGeometries(const GpuModel& model, const ProfileFilter& filter) {
  auto all = enumerateGeometries(model, filter);
  std::set<MigGeometry> valid(all.begin(), all.end());
  auto profiles = allowedProfiles(model, filter);
  std::vector<MigGeometry> out;
  for (const auto& g : all) {
    bool extendable = std::any_of(profiles.begin(), profiles.end(), [&](const MigProfile* p) {
      MigGeometry bigger = g;
      ++bigger[p->name];
      return valid.count(bigger) > 0;
    });
    if (!extendable) out.push_back(g);
  }
  return out;
}

}  // namespace gpuscale::partition
