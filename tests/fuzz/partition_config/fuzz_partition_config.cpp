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

#include "fuzz_harness.h"
#include "gpuscale/core/go_quote.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/partition/policy.h"

namespace {

[[noreturn]] void fail(const char* what, std::string_view input) {
  gpuscale::fuzz::fail("fuzz_partition_config", what, input);
}

void policies(std::string_view yaml) {
  const auto parsed = gpuscale::partition::parsePolicies(yaml);
  if (!parsed) return;
  std::set<std::string> names;
  for (const auto& policy : parsed->policies) {
    if (!names.insert(policy.name).second) fail("duplicate policy names accepted", yaml);
  }
}

// An accepted UTF-8 `yaml` must parse back from what `emit` writes of it: parse(emit(c)) == c.
template <typename Parse, typename Emit>
void roundTrip(std::string_view yaml, Parse parse, Emit emit, const char* broken) {
  const auto parsed = parse(yaml);
  if (!parsed || !gpuscale::core::isValidUtf8(yaml)) return;
  const auto back = parse(emit(*parsed));
  if (!back || !(*back == *parsed)) fail(broken, yaml);
}

void migParted(std::string_view yaml) {
  roundTrip(yaml, gpuscale::partition::parseMigPartedConfig,
            gpuscale::partition::emitMigPartedConfig,
            "mig-parted config does not survive emitting");
}

void devicePlugin(std::string_view yaml) {
  roundTrip(yaml, gpuscale::partition::parseDevicePluginConfig,
            gpuscale::partition::emitDevicePluginConfig,
            "device-plugin config does not survive emitting");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return gpuscale::fuzz::dispatch(data, size, {policies, migParted, devicePlugin});
}
