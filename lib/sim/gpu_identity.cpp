#include "gpuscale/sim/gpu_identity.h"

#include <cstdint>

#include <fmt/format.h>

#include "gpuscale/core/fnv1a.h"

namespace gpuscale::sim {
namespace {

std::string uuidText(std::string_view prefix, const std::string& key) {
  const std::uint64_t a = core::fnv1a64(key);
  const std::uint64_t b = core::fnv1a64(fmt::format("{:016x}", a));
  return fmt::format("{}-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", prefix, a >> 32, (a >> 16) & 0xffff,
                     a & 0xffff, b >> 48, b & 0xffffffffffffull);
}

}  // namespace

std::string gpuUuid(std::string_view node, int gpu) {
  return uuidText("GPU", fmt::format("{}/gpu{}", node, gpu));
}

std::string migUuid(std::string_view node, int gpu, std::string_view profile, int start) {
  return uuidText("MIG", fmt::format("{}/gpu{}/{}@{}", node, gpu, profile, start));
}

int pciBusNumber(int gpu) { return 0x07 + 8 * gpu; }

std::string nvmlProductName(std::string product) {
  if (auto dash = product.find('-'); dash != std::string::npos) product[dash] = ' ';
  return product;
}

}  // namespace gpuscale::sim
