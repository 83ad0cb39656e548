#include "gpuscale/prom/discovery.h"

#include <algorithm>

namespace gpuscale::prom {

Result<DiscoveryBackend> parseDiscoveryBackend(std::string_view name) {
  if (name == "prometheus") return DiscoveryBackend::kPrometheus;
  if (name == "victoriametrics") return DiscoveryBackend::kVictoriaMetrics;
  if (name == "thanos") return DiscoveryBackend::kThanos;
  return core::Status::badRequest("unknown discovery backend \"" + std::string(name) +
                                  "\" (prometheus, victoriametrics or thanos)");
}

core::Status appendReplicaLabels(std::string_view value, std::vector<std::string>& labels) {
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = std::min(value.find(',', start), value.size());
    if (comma == start) return core::Status::badRequest("empty label name");
    labels.emplace_back(value.substr(start, comma - start));
    start = comma + 1;
  }
  return core::Status();
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
