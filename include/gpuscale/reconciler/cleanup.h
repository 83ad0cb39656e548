// The off-ramp: `gpuscale-reconciler cleanup` takes every trace of the reconciler off the cluster
// after it was stopped (scaled to 0 or uninstalled), so the GPU Operator and the HPAs go on as if
// gpuscale had never run.
//
// In order:
//   0. With `stopDeployment` (the chart's uninstall hook): scales that Deployment of the state
//      namespace (the reconciler's own) to 0 through its /scale subresource and waits, bounded by
//      `waitTimeout`, until no pod of its selector is left, so nothing undoes what follows. A
//      Deployment that is already gone counts as stopped; pods still there at the deadline are an
//      error value and nothing is cleaned.
//   1. Waits (bounded by `waitTimeout`) for the node operations in flight: a node whose intent
//      annotation says its MIG label was flipped (phase applied) while mig-manager still reports
//      nvidia.com/mig.config.state pending or rebooting. A node still busy at the deadline is
//      reported (CleanupReport::stillInFlight) and cleaned all the same.
//   2. Restores each HPA's ceiling to the original the state store recorded (only for the HPA
//      of the recorded uid, and only when it differs) where it is held: the HPA's maxReplicas, or
//      for an HPA a KEDA ScaledObject owns, the ScaledObject's maxReplicaCount (KEDA copies it over
//      the HPA's); and removes gpuscale's status annotation from every HPA and ScaledObject (where
//      KEDA is not installed there are none). The `gpuscale.io/partition-policy` annotation stays:
//      the HPA's owner wrote it, and without a running reconciler it does nothing.
//   3. From every Node: the reshape taint, every `gpuscale.io/` label and annotation; with
//      `restoreStockConfigs`, a nvidia.com/mig.config or nvidia.com/device-plugin.config label
//      that names one of gpuscale's own configs of that node (partition/config_name.h) is set to
//      `stockMigConfig` / `stockDevicePluginConfig` ("" = the label is removed, so the operator's
//      default applies). Labels naming any other config are left alone.
//   4. Deletes the state store ConfigMap once every HPA it names was restored (unless
//      `keepStateStore`).
// Every change is a read-modify-write merge patch with the read resourceVersion
// (optimistic_write.h), so it is safe to run twice: a second run finds nothing to do. A failed
// write does not stop the others; it is in CleanupReport::errors.
//
// The reconciler's ConfigMaps in the operator's namespace are not touched: the ClusterPolicy still
// names them until it is pointed back at the stock ones (docs/reconciler.md, "Off-ramp").
//
// Thread safety: a function; the client must be thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/reconciler/hpa_state_store.h"

namespace gpuscale::reconciler {

struct CleanupOptions {
  StateStoreOptions state;  // where the reconciler kept the HPA-side state
  std::chrono::milliseconds waitTimeout{std::chrono::minutes(10)};
  std::chrono::milliseconds pollInterval{std::chrono::seconds(2)};
  bool restoreStockConfigs = false;
  std::string stockMigConfig = "all-disabled";  // the GPU Operator's migManager.config.default
  std::string stockDevicePluginConfig;          // "" = remove the label
  bool keepStateStore = false;
  std::string stopDeployment;  // "" = the reconciler was stopped by hand
  // Test seams: the clock the wait reads and how it sleeps.
  std::function<std::chrono::steady_clock::time_point()> now = [] {
    return std::chrono::steady_clock::now();
  };
  std::function<void(std::chrono::milliseconds)> sleep;  // default: this thread sleeps
};

struct CleanupReport {
  std::vector<std::string> nodesCleaned;  // nodes that had something removed or relabelled
  // "<ns>/<name>: <from> -> <to>", plus " (ScaledObject <name> spec.maxReplicaCount)" where
  // KEDA's ScaledObject holds the HPA's ceiling
  std::vector<std::string> hpasRestored;
  // "<ns>/<name>" of HPAs, "ScaledObject <ns>/<name>", whose status annotation went
  std::vector<std::string> hpasUnannotated;
  std::vector<std::string> stillInFlight;  // nodes whose operation outlived the wait
  bool stateStoreDeleted = false;
  std::vector<std::string> errors;  // writes that failed (the rest went on)
  bool clean() const { return errors.empty() && stillInFlight.empty(); }
};

// Runs the steps above. An error value only when the reconciler could not be stopped (step 0) or
// the cluster cannot be read at all (nodes, HPAs or the state store); failed writes are in the
// report.
core::Result<CleanupReport> cleanup(const std::shared_ptr<kube::KubeClient>& client,
                                    const CleanupOptions& options);

// The report as lines for a human (what changed, what is left, what to do next).
std::string cleanupReportText(const CleanupReport& report);

}  // namespace gpuscale::reconciler
