#include "gpu_mapping_flags.h"

namespace gpuscale::reconciler {

void addGpuMappingFlags(core::FlagSet& flags, std::string* mapping, DcgmMappingOptions* dcgm) {
  flags.addChoice("gpu-mapping", mapping,
                  "which pods use which GPU: node (a GPU is busy when its node runs a GPU pod) or "
                  "dcgm (dcgm-exporter's per-GPU series in Prometheus; needs --prometheus-url)",
                  {{"node", std::string("node")}, {"dcgm", std::string("dcgm")}});
  flags.addNonEmptyString("dcgm-metric", &dcgm->metric,
                          "the dcgm-exporter series that names a GPU's pods");
  flags
      .addCustom("dcgm-node-labels", "strings",
                 "labels of that series that may carry the node name, tried in order",
                 [dcgm](std::string_view value) {
                   std::vector<std::string> labels = core::splitCommaList(value);
                   if (labels.empty()) return core::Status::badRequest("must name a label");
                   dcgm->nodeLabels = std::move(labels);
                   return core::Status();
                 })
      .defaultText("Hostname,hostname");
  flags.addNonEmptyString("dcgm-gpu-label", &dcgm->gpuLabel, "label with the GPU index");
  flags.addNonEmptyString("dcgm-pod-label", &dcgm->podLabel, "label with the pod name");
  flags.addNonEmptyString("dcgm-namespace-label", &dcgm->namespaceLabel,
                          "label with the pod's namespace");
  flags.addDuration("dcgm-max-age", &dcgm->maxAge, "older samples are not trusted",
                    core::DurationBound::kPositive);
  flags.addDuration("dcgm-settle", &dcgm->settle,
                    "after a node operation, how long its GPUs' series are not trusted");
  flags.addString("dcgm-utilization-metric", &dcgm->utilizationMetric,
                  "the series of a GPU's utilisation (\"\": none)");
}

}  // namespace gpuscale::reconciler
