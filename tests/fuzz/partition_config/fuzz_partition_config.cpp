// Fuzzes the reconciler's YAML inputs: the partition policy file (operators), and the mig-parted
// and device-plugin configs it reads back from the GPU Operator's ConfigMaps. No input may crash or
// throw; an accepted mig-parted or device-plugin config in UTF-8 (ConfigMap data always is; the
// YAML emitter replaces malformed bytes) must survive a round trip, parse(emit(c)) == c, and an
// accepted policy file has distinct policy names. The first byte picks the parser; the rest is the
// file.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "gpuscale/core/go_quote.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/partition/policy.h"

namespace {

[[noreturn]] void fail(const char* what, std::string_view text) {
  std::fprintf(stderr, "fuzz_partition_config: %s for [%.*s]\n", what,
               static_cast<int>(text.size()), text.data());
  std::abort();
}

void policies(std::string_view yaml) {
  const auto parsed = gpuscale::partition::parsePolicies(yaml);
  if (!parsed) return;
  std::set<std::string> names;
  for (const auto& policy : parsed->policies) {
    if (!names.insert(policy.name).second) fail("duplicate policy names accepted", yaml);
  }
}

void migParted(std::string_view yaml) {
  const auto parsed = gpuscale::partition::parseMigPartedConfig(yaml);
  if (!parsed || !gpuscale::core::isValidUtf8(yaml)) return;
  const std::string emitted = gpuscale::partition::emitMigPartedConfig(*parsed);
  const auto back = gpuscale::partition::parseMigPartedConfig(emitted);
  if (!back || !(*back == *parsed)) fail("mig-parted config does not survive emitting", yaml);
}

void devicePlugin(std::string_view yaml) {
  const auto parsed = gpuscale::partition::parseDevicePluginConfig(yaml);
  if (!parsed || !gpuscale::core::isValidUtf8(yaml)) return;
  const std::string emitted = gpuscale::partition::emitDevicePluginConfig(*parsed);
  const auto back = gpuscale::partition::parseDevicePluginConfig(emitted);
  if (!back || !(*back == *parsed)) fail("device-plugin config does not survive emitting", yaml);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view yaml(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0:
      policies(yaml);
      break;
    case 1:
      migParted(yaml);
      break;
    default:
      devicePlugin(yaml);
      break;
  }
  return 0;
}
