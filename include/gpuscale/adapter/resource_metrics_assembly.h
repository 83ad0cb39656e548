// From the answers of resourceRules' queries to metrics.k8s.io objects: the pure part of the
// resource metrics provider (resource_provider.h).
//
// Pods: a cpu and a memory containerQuery answer, each grouped by the pod label and the rule's
// containerLabel (and by the namespace label when one query spans namespaces). A container is the
// container label's value ("" when a sample has none); when several samples name the same
// container, the last one wins (prometheus-adapter). A pod is reported only when every one of its
// containers has a valid cpu and a valid memory value: a container seen in one query only, or with
// a value that is not a finite non-negative number, leaves the whole pod out, as metrics-server
// leaves out pods it has incomplete data for (prometheus-adapter would report a made-up 0, which
// the HPA would average in as idle). Containers are sorted by name.
//
// Nodes: a cpu and a memory nodeQuery answer grouped by the node label; the first sample of a node
// wins (prometheus-adapter); a node lacking either value is left out.
//
// Values as metrics-server renders them: cpu cores become a whole number of nanocores (rounded to
// the nearest, printed canonically: "250m", "123456789n", "1"), memory bytes a whole number of
// bytes in BinarySI ("4Ki", "1Mi", "1000000"). `timestamp` is the earliest sample time of the
// object's samples (for instant queries, the evaluation time); `window` is resourceRules.window.
// Results are sorted by namespace, then name; labels are left empty (the caller knows them).
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/apiserver/resource_metrics.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/core/quantity.h"
#include "gpuscale/prom/types.h"

namespace gpuscale::adapter {

// Cores as nanocores, or nullopt when `cores` is NaN, infinite or negative. Values beyond the int64
// nanocore range (292 years of CPU time per second) saturate.
std::optional<core::Quantity> cpuUsageQuantity(double cores);
// Bytes as a whole number of bytes (BinarySI), or nullopt as above.
std::optional<core::Quantity> memoryUsageQuantity(double bytes);

// One resource's query answer and the labels to read it with.
struct UsageSamples {
  const std::vector<prom::Sample>* samples = nullptr;
  std::string objectLabel;     // the label holding pod (or node) names
  std::string containerLabel;  // pods: resourceRules.<resource>.containerLabel (may be "")
  // Pods, when the query spanned namespaces: the label holding the namespace. Empty: every sample
  // is in `namespaceName` of assemblePodMetrics().
  std::string namespaceLabel;
};

std::vector<apiserver::PodMetrics> assemblePodMetrics(std::string_view namespaceName,
                                                      const UsageSamples& cpu,
                                                      const UsageSamples& memory,
                                                      core::Duration window);

std::vector<apiserver::NodeMetrics> assembleNodeMetrics(const UsageSamples& cpu,
                                                        const UsageSamples& memory,
                                                        core::Duration window);

}  // namespace gpuscale::adapter
