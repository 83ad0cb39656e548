// GpuPodMapping from dcgm-exporter series in Prometheus. dcgm-exporter (with its Kubernetes
// mapping on: `DCGM_EXPORTER_KUBERNETES=true`, as the GPU Operator and the Helm chart run it)
// labels each GPU's series with the GPU index (`gpu`) and, when a pod holds the device, the pod's
// `pod` and `namespace`; a MIG instance has its own series (`GPU_I_ID`, `GPU_I_PROFILE`) under the
// parent GPU's `gpu`. The node is in `Hostname` (from NODE_NAME; lowercase `hostname` in newer
// releases) unless a scrape relabels it.
//
// One instant query per call for the mapping, through the prom::Client seam:
//   timestamp(<metric>{<nodeLabel>="<node>"}) or timestamp(<metric>{<nodeLabel2>="<node>"}) ...
// Each sample's value is the time of its last scrape. The answer is per GPU only when:
//  - the query succeeds and returns at least one series (else "error" / "absent");
//  - every series carries an integer GPU label (else "malformed");
//  - every series is newer than `maxAge` (else "stale": a paused or dead exporter);
//  - every pod the API places on the node appears as the pod/namespace of some series (else
//    "unaccounted": a pod just started, a shared GPU the exporter reports for one pod only, or a
//    scrape with honorLabels off that renamed the labels).
// Otherwise it answers nullopt (the node-level rule), counts the reason in
// `gpuscale_reconciler_gpu_mapping_total{result}` and logs the first time a reason is seen.
//
// Settling: dcgm-exporter names a pod only from its first collection after the pod got its
// device (every 30 s by default), and Prometheus sees that a scrape later. When the only pods
// missing started less than `settle` ago and some reported GPU holds no pod (so a settled answer
// could free it), the answer is GpuOccupancy::settling (counted "settling", logged once): callers
// wait instead of choosing a lever on the worst case. The wait per node is bounded: once a node
// has been settling for `settle` without a complete answer it falls back ("unaccounted") until
// the missing pods are named or gone. `settle` 0 never waits.
//
// Utilisation: a second query, <utilizationMetric>{<nodeLabel>="<node>"} (one `or` per node
// label), averaged per resource over the series that name a pod (a free device is capacity pods
// are about to use, not a sign that the held ones have room): a series with GPU_I_PROFILE is a
// MIG instance of
// "nvidia.com/mig-<profile>", one without is a whole "nvidia.com/gpu". The last sample is enough:
// DCGM's fields are already averages over the exporter's collect interval, and a window in
// Prometheus would blend in the minutes before a burst, when the devices were idle. A metric
// whose name ends in "_UTIL" is in percent (DCGM_FI_DEV_GPU_UTIL, absent for MIG instances), any
// other is a ratio (DCGM_FI_PROF_GR_ENGINE_ACTIVE, reported per MIG instance). A failed query
// leaves the utilisation unknown (logged once); it never changes the mapping's answer.
//
// Thread safety: thread-safe (the client is; the log-once set and settle clocks are guarded).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "gpuscale/prom/client.h"
#include "gpuscale/reconciler/gpu_pod_mapping.h"
#include "gpuscale/reconciler/reconciler_metrics.h"

namespace gpuscale::reconciler {

struct DcgmMappingOptions {
  // Any per-device field dcgm-exporter collects on every GPU and MIG instance.
  // DCGM_FI_DEV_FB_USED is in the default counters and reported per MIG instance;
  // DCGM_FI_DEV_GPU_UTIL is not (absent for MIG).
  std::string metric = "DCGM_FI_DEV_FB_USED";
  // Labels that may name the node; series match when any of them equals the node name.
  std::vector<std::string> nodeLabels = {"Hostname", "hostname"};
  std::string gpuLabel = "gpu";
  // `exported_pod` / `exported_namespace` when Prometheus scrapes with honorLabels off.
  std::string podLabel = "pod";
  std::string namespaceLabel = "namespace";
  // Older samples mean the exporter stopped (a mig-manager run pauses it). dcgm-exporter collects
  // every 30 s by default; with a 30 s scrape two missed rounds stay under this.
  std::chrono::seconds maxAge{120};
  // How long pods that just started may be missing from the series before the node falls back to
  // the node-level rule: dcgm-exporter's collect interval plus a scrape interval, with margin.
  std::chrono::seconds settle{90};
  // Device utilisation ("" asks nothing).
  std::string utilizationMetric = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
  std::string profileLabel = "GPU_I_PROFILE";
};

// Why an answer fell back to the node-level rule, or "per_gpu" when it did not.
inline constexpr const char* kMappingPerGpu = "per_gpu";
// An incomplete answer while pods that just started are not in the series yet.
inline constexpr const char* kMappingSettling = "settling";

class DcgmGpuPodMapping final : public GpuPodMapping {
 public:
  // `metrics` may be null (nothing counted).
  DcgmGpuPodMapping(std::shared_ptr<prom::Client> client, DcgmMappingOptions options,
                    std::shared_ptr<ReconcilerMetrics> metrics);

  std::optional<GpuOccupancy> occupancy(const std::string& node, const NodeGpuPods& pods,
                                        std::chrono::system_clock::time_point now) override;

  // The PromQL asked for `node` (for logs and tests).
  std::string queryFor(const std::string& node) const;
  // The utilisation PromQL for `node`; "" when no utilisation metric is set.
  std::string utilizationQueryFor(const std::string& node) const;

 private:
  std::optional<GpuOccupancy> fallBack(const std::string& node, const char* reason,
                                       const std::string& detail);
  // The pods of `pods` no series names, when waiting for them is worth it (see above); else
  // empty. Starts or ends `node`'s settle clock.
  std::set<std::string> settlingPods(const std::string& node, const NodeGpuPods& pods,
                                     const std::set<std::string>& missing, const GpuOccupancy& seen,
                                     std::chrono::system_clock::time_point now);
  std::map<std::string, double, std::less<>> utilization(const std::string& node,
                                                         std::chrono::system_clock::time_point now);
  void logOnce(const std::string& reason, const std::string& message);

  std::shared_ptr<prom::Client> client_;
  DcgmMappingOptions options_;
  std::shared_ptr<ReconcilerMetrics> metrics_;
  std::mutex mu_;
  std::set<std::string> logged_;  // reasons already logged
  // Nodes whose answer has been settling since then (erased once a pass needs no wait).
  std::map<std::string, std::chrono::system_clock::time_point> settlingSince_;
};

}  // namespace gpuscale::reconciler
