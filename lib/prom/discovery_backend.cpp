#include "gpuscale/prom/discovery.h"

namespace gpuscale::prom {

Result<DiscoveryBackend> parseDiscoveryBackend(std::string_view name) {
  if (name == "prometheus") return DiscoveryBackend::kPrometheus;
  if (name == "victoriametrics") return DiscoveryBackend::kVictoriaMetrics;
  if (name == "thanos") return DiscoveryBackend::kThanos;
  return core::Status::badRequest("unknown discovery backend \"" + std::string(name) +
                                  "\" (prometheus, victoriametrics or thanos)");
}

DiscoveryOptions discoveryOptionsFor(DiscoveryBackend backend) {
  DiscoveryOptions options;
  if (backend == DiscoveryBackend::kVictoriaMetrics) {
    options.strategy = LabelNamesStrategy::kUnion;
    options.nameShards = 1;
  }
  return options;
}

}  // namespace gpuscale::prom
