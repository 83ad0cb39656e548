#include "gpuscale/sim/nvml_mig_profiles.h"

#include <map>
#include <string>

namespace gpuscale::sim {
namespace {

// GiB as `-lgip` prints them (two decimals) in MiB: 4.75 GiB = 4864 MiB, 19.62 GiB = 20096 MiB.
const std::map<std::string, std::vector<NvmlGpuInstanceProfile>, std::less<>>& listings() {
  static const std::map<std::string, std::vector<NvmlGpuInstanceProfile>, std::less<>> kListings = {
      {"A100-40GB",
       {
           {"1g.5gb", 19, 14, 1, 0, 0, 0, 0, 4864},
           {"1g.5gb+me", 20, 14, 1, 1, 0, 1, 1, 4864},
           {"1g.10gb", 15, 14, 1, 1, 0, 0, 0, 9856},
           {"2g.10gb", 14, 28, 2, 1, 0, 0, 0, 9856},
           {"3g.20gb", 9, 42, 3, 2, 0, 0, 0, 19968},
           {"4g.20gb", 5, 56, 4, 2, 0, 0, 0, 19968},
           {"7g.40gb", 0, 98, 7, 5, 0, 1, 1, 40192},
       }},
      {"H100-80GB",
       {
           {"1g.10gb", 19, 16, 1, 1, 0, 1, 0, 9984},
           {"1g.10gb+me", 20, 16, 1, 1, 0, 1, 1, 9984},
           {"1g.20gb", 15, 26, 1, 1, 0, 1, 0, 20096},
           {"2g.20gb", 14, 32, 2, 2, 0, 2, 0, 20096},
           {"3g.40gb", 9, 60, 3, 3, 0, 3, 0, 40448},
           {"4g.40gb", 5, 64, 4, 4, 0, 4, 0, 40448},
           {"7g.80gb", 0, 132, 8, 7, 0, 7, 1, 81152},
       }},
  };
  return kListings;
}

}  // namespace

const std::vector<NvmlGpuInstanceProfile>* nvmlGpuInstanceProfiles(std::string_view modelName) {
  auto it = listings().find(modelName);
  return it == listings().end() ? nullptr : &it->second;
}

const NvmlGpuInstanceProfile* nvmlGpuInstanceProfile(std::string_view modelName,
                                                     std::string_view profile) {
  const auto* all = nvmlGpuInstanceProfiles(modelName);
  if (all == nullptr) return nullptr;
  for (const auto& p : *all) {
    if (p.name == profile) return &p;
  }
  return nullptr;
}

}  // namespace gpuscale::sim
