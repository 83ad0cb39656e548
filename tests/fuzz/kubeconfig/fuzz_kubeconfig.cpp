// Fuzzes kubeconfig parsing (the file given with --kubeconfig or $KUBECONFIG). No input may crash
// or throw. The files a kubeconfig names are served from memory, never read from disk: a name
// ending in "ca.crt" or "client.crt" reads as a PEM certificate, "client.key" as a key, anything
// else is missing. An accepted config names a server without a trailing slash, and its token (if
// any) is trimmed.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_harness.h"
#include "gpuscale/core/status.h"
#include "gpuscale/kube/config.h"

namespace {

[[noreturn]] void fail(const char* what, std::string_view input) {
  gpuscale::fuzz::fail("fuzz_kubeconfig", what, input);
}

gpuscale::core::Result<std::string> readFromMemory(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  if (name.ends_with("ca.crt") || name.ends_with("client.crt")) {
    return std::string("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  }
  if (name.ends_with("client.key")) {
    return std::string("-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
  }
  return gpuscale::core::Status::notFound("no such file: " + file.string());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const char* context : {"", "gpu-cluster"}) {
    auto config =
        gpuscale::kube::parseKubeconfig(text, "/etc/gpuscale/kubeconfig", context, readFromMemory);
    if (!config) continue;
    if (!config->server.empty() && config->server.back() == '/') {
      fail("a server with a trailing slash", text);
    }
  }
  return 0;
}
