// GpuPodMapping from dcgm-exporter series in Prometheus. dcgm-exporter (with its Kubernetes
// mapping on: `DCGM_EXPORTER_KUBERNETES=true`, as the GPU Operator and the Helm chart run it)
// labels each GPU's series with the GPU index (`gpu`) and, when a pod holds the device, the pod's
// `pod` and `namespace`; a MIG instance has its own series (`GPU_I_ID`, `GPU_I_PROFILE`) under the
// parent GPU's `gpu`. The node is in `Hostname` (from NODE_NAME; lowercase `hostname` in newer
// releases) unless a scrape relabels it.
//
// One instant query per call, through the prom::Client seam:
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
// Thread safety: thread-safe (the client is; the log-once set is guarded).
#pragma once

#include <chrono>
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
};

// Why an answer fell back to the node-level rule, or "per_gpu" when it did not.
inline constexpr const char* kMappingPerGpu = "per_gpu";

class DcgmGpuPodMapping final : public GpuPodMapping {
 public:
  // `metrics` may be null (nothing counted).
  DcgmGpuPodMapping(std::shared_ptr<prom::Client> client, DcgmMappingOptions options,
                    std::shared_ptr<ReconcilerMetrics> metrics);

  std::optional<GpuOccupancy> occupancy(const std::string& node, const std::set<std::string>& pods,
                                        std::chrono::system_clock::time_point now) override;

  // The PromQL asked for `node` (for logs and tests).
  std::string queryFor(const std::string& node) const;

 private:
  std::optional<GpuOccupancy> fallBack(const std::string& node, const char* reason,
                                       const std::string& detail);

  std::shared_ptr<prom::Client> client_;
  DcgmMappingOptions options_;
  std::shared_ptr<ReconcilerMetrics> metrics_;
  std::mutex mu_;
  std::set<std::string> logged_;  // reasons already logged
};

}  // namespace gpuscale::reconciler
