// MigManagerModel: the GPU Operator's k8s-mig-manager for one node, as a state machine with the
// clock passed in (no threads, no I/O), so the emulator drives it and tests step it.
//
// Behaviour (reference: gpu-partitioning.md §2.3): it acts only when the node's
// `nvidia.com/mig.config` label changes value (setting the same value again after a failure does
// nothing). An unknown config name fails at once (`failed`, nothing paused). A config that matches
// the current geometry succeeds at once. Otherwise: state `pending`, the device plugin, GFD and
// dcgm-exporter are paused (GPU allocatable 0), and after the reconfigure delay mig-parted
// rebuilds the GPUs whose setting changes. If one of those GPUs holds a running pod (NVML "In use
// by another client"), or the scenario injects a failure into this reconfiguration, the state
// becomes `failed` and the operands come back on the old geometry; else the new geometry is applied
// and the state is `success`. A label change seen while pending is applied after the current run.
// Injected `hang` leaves the run pending (plugin paused) for ever; `hang-rebooting` turns it into
// `rebooting` after the delay, for ever (a node that never returns from its reboot); `ignore` never
// reacts.
//
// A config that switches some GPU's MIG mode takes mig-manager's mode phase (MigModeChangeSpec):
// it stays pending for the longer mode-change delay, and then fails if *any* GPU of the node holds
// a pod, not only one whose setting changes (mig-parted resets every GPU of the node for a pending
// mode change, and clears every MIG-enabled GPU the config selects). On a platform that needs a
// reboot the state then becomes `rebooting` (operands still paused) until the reboot delay has
// passed, and the new settings come with `success`.
//
// Thread safety: not thread-safe; the emulator calls it under its own lock.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/sim/scenario.h"

namespace gpuscale::sim {

enum class MigConfigState { kSuccess, kPending, kRebooting, kFailed };
std::string_view migConfigStateName(MigConfigState state);  // the label value

using SteadyTime = std::chrono::steady_clock::time_point;
// The per-GPU settings a named config gives this node (GPUs no entry selects keep `current`), or
// nullopt when no mig-parted ConfigMap the node uses has that name.
using MigConfigResolver = std::function<std::optional<std::vector<partition::MigGpuSetting>>(
    const std::string& name, const std::vector<partition::MigGpuSetting>& current)>;

class MigManagerModel {
 public:
  // `initialConfig` is the label value the node starts with, already applied as `gpus`; a run
  // takes `delay` from pending to its outcome, one that switches MIG mode `modeChange.delay` (and
  // the reboot, when the platform needs one).
  MigManagerModel(GpuNodeSpec node, std::chrono::milliseconds delay, std::string initialConfig,
                  std::vector<partition::MigGpuSetting> gpus, MigModeChangeSpec modeChange = {});

  // The node's label is `label` now (call on every observation; only changes act). Returns a log
  // line when something happened, else "".
  std::string observeLabel(const std::string& label, const MigConfigResolver& resolve,
                           SteadyTime now);
  // Finishes a pending run whose delay has passed. `busyGpus`: indices of GPUs holding pods.
  std::string tick(SteadyTime now, const std::set<int>& busyGpus, const MigConfigResolver& resolve);

  MigConfigState state() const { return state_; }
  const std::vector<partition::MigGpuSetting>& gpus() const { return gpus_; }
  // The device plugin, GFD and dcgm-exporter are stopped (a run is pending, or the node reboots).
  bool paused() const { return running(); }
  // When tick() has work to do; nullopt when nothing is scheduled.
  std::optional<SteadyTime> deadline() const;
  int reconfigurations() const { return reconfigurations_; }
  uint64_t successes() const { return successes_; }
  uint64_t failures() const { return failures_; }
  // Runs that switched MIG mode on some GPU (successful or not).
  int modeChanges() const { return modeChanges_; }

 private:
  bool running() const {
    return state_ == MigConfigState::kPending || state_ == MigConfigState::kRebooting;
  }
  // The end of a pending run whose delay has passed: failed, rebooting or applied.
  std::string conclude(SteadyTime now, const std::set<int>& busyGpus);
  std::string start(const std::string& label, const MigConfigResolver& resolve, SteadyTime now);
  std::string finish(MigConfigState state, std::string message);

  GpuNodeSpec node_;
  std::chrono::milliseconds delay_;
  MigModeChangeSpec modeChange_;
  std::string observed_;  // the label value last acted on
  MigConfigState state_ = MigConfigState::kSuccess;
  std::vector<partition::MigGpuSetting> gpus_;
  std::vector<partition::MigGpuSetting> target_;
  std::optional<SteadyTime> due_;  // pending run completes then; nullopt while hung
  std::optional<std::string> queued_;
  FailureMode injected_ = FailureMode::kFail;
  bool injectedFailure_ = false;
  bool switchesMode_ = false;  // the running run changes some GPU's MIG mode
  int reconfigurations_ = 0;
  int modeChanges_ = 0;
  uint64_t successes_ = 0;
  uint64_t failures_ = 0;
};

}  // namespace gpuscale::sim
