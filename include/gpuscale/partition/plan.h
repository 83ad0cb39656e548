// A partition plan: what the planner decided, as data for the actuator, the `plan` command and
// tests.
//
// Actions come in a fixed order (MIG reconfigurations by node, time-slicing changes by node and
// resource, maxReplicas changes by HPA), so equal inputs give byte-identical JSON.
//
// JSON shape (`planToJson`):
//   {"demands":[{"namespace","name","resource","ceiling","wanted"}],
//    "actions":[{"kind":"MigReconfigure","node","gpus":[{"index","from","to"[,"migEnabled"]}],
//                "config"}
//              |{"kind":"TimeSlicing"|"Mps","node","resource","replicas"}
//              |{"kind":"SetMaxReplicas","namespace","name","from","to"}],
//    "capacityAfter":[{"namespace","name","ceiling"}],
//    "promiseCuts":[{"namespace","name","from","to"}]}   (only when the plan cuts a promise)
// where "from"/"to" of a GPU are mig-devices maps ({"1g.5gb": 7}) and "config" is the named
// mig-parted config to add to the mig-manager ConfigMap and select with the node label
// `nvidia.com/mig.config`; "migEnabled" ({"from": false, "to": true}) is there only for a GPU whose
// MIG mode changes:
// {"name": "...", "entries": [{"devices": [0, 1], "mig-enabled": true, "mig-devices": {...}}]}.
//
// Thread safety: values.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/partition/mig_geometry.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/partition/why_not.h"

namespace gpuscale::partition {

struct GpuChange {
  int index = 0;
  MigGeometry from, to;
  // MIG mode before and after; they differ only when the policy allows mode changes
  // (MigModeChangePolicy).
  bool fromMigEnabled = true, toMigEnabled = true;
  bool switchesMigMode() const { return fromMigEnabled != toMigEnabled; }
};

// Rebuild the listed GPUs of an idle node through mig-manager.
struct MigReconfigure {
  std::string node;
  std::vector<GpuChange> gpus;          // only GPUs whose setting changes
  std::string configName;               // ownedConfigName(node, entries): config_name.h
  std::vector<MigConfigEntry> entries;  // every GPU of the node, per-GPU `devices:` lists
  // Some GPU's MIG mode changes: mig-parted then resets every GPU of the node (and the node may
  // reboot), so every GPU of the node must be idle, not only the listed ones.
  bool switchesMigMode() const;
};

// Set the node's sharing replicas for one resource (node-wide, as the device plugin allows):
// time-slicing, or MPS when `mode` says so (mps_sharing.h).
struct TimeSlicingChange {
  std::string node;
  std::string resource;
  int from = 1;
  int replicas = 1;
  SharingMode mode = SharingMode::kTimeSlicing;
};

struct SetMaxReplicas {
  std::string ns, name;
  int from = 0, to = 0;
};

using PlanAction = std::variant<MigReconfigure, TimeSlicingChange, SetMaxReplicas>;

// Lowers the maxReplicas a change in flight promised an HPA (the raise it will make once its node
// operations finish) from `from` to `to`: contention gave part of that still-unused capacity to
// an HPA of higher priority (contention.h). Never below the HPA's maxReplicas before the change
// nor below the replicas its target has, so no pod that exists is affected.
struct PromiseCut {
  std::string ns, name;
  int from = 0, to = 0;
};

struct DemandSummary {
  std::string ns, name, resource;
  BlockReason reason = BlockReason::kNone;
  int ceiling = 0, wanted = 0;
  // Why gpuscale acts and how much it grants: the forecast of an anticipated demand, the share of
  // a contended one (contention.h). Empty when the demand is simply met.
  std::string explain;
};

struct CapacitySummary {
  std::string ns, name;
  int ceiling = 0;
};

struct Plan {
  std::vector<DemandSummary> demands;
  std::vector<PlanAction> actions;
  std::vector<CapacitySummary> capacityAfter;
  std::vector<PromiseCut> promiseCuts;  // by HPA; in the JSON only when there are some
  std::vector<std::string>
      notes;  // why a demand was not (fully) met; shown in the text output only
  // Why each managed HPA was (not) raised, in the workloads' order (why_not.h). Not part of the
  // plan's JSON or text: `gpuscale-reconciler explain` shows it.
  std::vector<HpaWhy> why;
};

nlohmann::ordered_json planToJson(const Plan& plan);
// One action as in planToJson's "actions", and as one line of planToText.
nlohmann::ordered_json actionToJson(const PlanAction& action);
std::string actionToText(const PlanAction& action);
// A human-readable summary: demands, then one line per action, then notes.
std::string planToText(const Plan& plan);

}  // namespace gpuscale::partition
