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

void addDiscoveryFlags(core::FlagSet& flags, DiscoveryBackend* backend, DiscoveryOptions* options) {
  flags
      .addCustom("discovery-backend", "string",
                 "prometheus, victoriametrics or thanos: the label-API calls metric discovery "
                 "makes are the cheapest on that server; with thanos, --prometheus-url gets "
                 "partial_response=false unless it names the parameter itself",
                 [backend, options](std::string_view value) {
                   auto parsed = parseDiscoveryBackend(value);
                   if (!parsed) return parsed.status();
                   std::vector<std::string> replicaLabels = std::move(options->replicaLabels);
                   *options = discoveryOptionsFor(*parsed);
                   options->replicaLabels = std::move(replicaLabels);
                   *backend = *parsed;
                   return core::Status();
                 })
      .defaultText("prometheus");
  flags
      .addCustom("thanos-replica-label", "strings",
                 "Thanos Query's --query.replica-label names, which its label APIs list although "
                 "deduplicated series do not carry them: left out of discovery",
                 [options](std::string_view value) {
                   return appendReplicaLabels(value, options->replicaLabels);
                 })
      .repeatable();
}

}  // namespace gpuscale::prom
