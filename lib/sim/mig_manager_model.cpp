#include "gpuscale/sim/mig_manager_model.h"

#include <fmt/format.h>

#include "gpuscale/core/enum_names.h"
#include "gpuscale/partition/mig_geometry.h"

namespace gpuscale::sim {
namespace {

std::string describe(const std::vector<partition::MigGpuSetting>& gpus) {
  std::string out;
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (i > 0) out += " ";
    out += fmt::format(
        "gpu{}={}", i,
        gpus[i].migEnabled ? "[" + partition::formatGeometry(gpus[i].geometry) + "]" : "disabled");
  }
  return out;
}

}  // namespace

std::string_view migConfigStateName(MigConfigState state) {
  static constexpr core::EnumNames<MigConfigState, 4> kNames{
      {{MigConfigState::kSuccess, "success"},
       {MigConfigState::kPending, "pending"},
       {MigConfigState::kRebooting, "rebooting"},
       {MigConfigState::kFailed, "failed"}}};
  return core::enumName(kNames, state, "failed");
}

MigManagerModel::MigManagerModel(GpuNodeSpec node, std::chrono::milliseconds delay,
                                 std::string initialConfig,
                                 std::vector<partition::MigGpuSetting> gpus,
                                 MigModeChangeSpec modeChange)
    : node_(std::move(node)),
      delay_(delay),
      modeChange_(modeChange),
      observed_(std::move(initialConfig)),
      gpus_(std::move(gpus)) {}

std::optional<SteadyTime> MigManagerModel::deadline() const {
  return running() ? due_ : std::nullopt;
}

std::string MigManagerModel::observeLabel(const std::string& label,
                                          const MigConfigResolver& resolve, SteadyTime now) {
  if (label == observed_) return "";
  if (running()) {
    queued_ = label;
    return fmt::format("mig.config changed to \"{}\" during a run; queued", label);
  }
  return start(label, resolve, now);
}

std::string MigManagerModel::start(const std::string& label, const MigConfigResolver& resolve,
                                   SteadyTime now) {
  observed_ = label;
  if (label.empty()) return "mig.config label removed; nothing to do";
  auto target = resolve(label, gpus_);
  if (!target) {
    return finish(
        MigConfigState::kFailed,
        fmt::format("config \"{}\" is not in any mig-parted ConfigMap of the node", label));
  }
  if (*target == gpus_) {
    return finish(MigConfigState::kSuccess,
                  fmt::format("config \"{}\" already applied ({})", label, describe(gpus_)));
  }
  ++reconfigurations_;
  const InjectedFailure* injected = node_.failureFor(reconfigurations_);
  if (injected != nullptr && injected->mode == FailureMode::kIgnore) {
    return fmt::format("reconfiguration {} to \"{}\": injected failure, mig-manager ignores it",
                       reconfigurations_, label);
  }
  injectedFailure_ = injected != nullptr;
  injected_ = injected != nullptr ? injected->mode : FailureMode::kFail;
  target_ = std::move(*target);
  switchesMode_ = false;
  for (std::size_t i = 0; i < gpus_.size() && i < target_.size(); ++i) {
    switchesMode_ = switchesMode_ || target_[i].migEnabled != gpus_[i].migEnabled;
  }
  if (switchesMode_) ++modeChanges_;
  state_ = MigConfigState::kPending;
  due_ = injectedFailure_ && injected_ == FailureMode::kHang
             ? std::nullopt
             : std::optional(now + (switchesMode_ ? modeChange_.delay : delay_));
  return fmt::format("reconfiguration {} to \"{}\": pending, device plugin paused{} ({} -> {})",
                     reconfigurations_, label, switchesMode_ ? ", MIG mode change" : "",
                     describe(gpus_), describe(target_));
}

std::string MigManagerModel::conclude(SteadyTime now, const std::set<int>& busyGpus) {
  if (injectedFailure_ && injected_ == FailureMode::kHangRebooting) {
    state_ = MigConfigState::kRebooting;
    due_.reset();  // the node never comes back
    return fmt::format(
        "reconfiguration {}: injected failure, the node reboots and never returns "
        "-> rebooting",
        reconfigurations_);
  }
  if (injectedFailure_) {
    return finish(MigConfigState::kFailed,
                  fmt::format("reconfiguration {}: injected failure", reconfigurations_));
  }
  std::vector<int> blocked;
  for (int i = 0; i < static_cast<int>(gpus_.size()); ++i) {
    // A mode change resets every GPU of the node; a geometry change rebuilds only the GPUs whose
    // setting changes.
    const bool rebuilt = i < static_cast<int>(target_.size()) && !(target_[i] == gpus_[i]);
    if ((switchesMode_ || rebuilt) && busyGpus.contains(i)) blocked.push_back(i);
  }
  if (!blocked.empty()) {
    return finish(
        MigConfigState::kFailed,
        fmt::format("reconfiguration {}: GPU {} in use by another client (running pods){}",
                    reconfigurations_, fmt::join(blocked, ","),
                    switchesMode_ ? "; a MIG mode change resets every GPU of the node" : ""));
  }
  if (switchesMode_ && modeChange_.reboots) {
    state_ = MigConfigState::kRebooting;
    due_ = now + modeChange_.rebootDelay;
    return fmt::format("reconfiguration {}: the MIG mode change needs a node reboot -> rebooting",
                       reconfigurations_);
  }
  gpus_ = target_;
  return finish(MigConfigState::kSuccess, fmt::format("reconfiguration {}: applied ({})",
                                                      reconfigurations_, describe(gpus_)));
}

std::string MigManagerModel::tick(SteadyTime now, const std::set<int>& busyGpus,
                                  const MigConfigResolver& resolve) {
  std::string log;
  if (state_ == MigConfigState::kPending && due_ && now >= *due_) {
    log = conclude(now, busyGpus);
  } else if (state_ == MigConfigState::kRebooting && due_ && now >= *due_) {
    // The node is back; pods it held were gone with the reboot (the mode change needed every GPU
    // idle to start).
    gpus_ = target_;
    log = finish(MigConfigState::kSuccess,
                 fmt::format("reconfiguration {}: node rebooted, applied ({})", reconfigurations_,
                             describe(gpus_)));
  }
  if (!running() && queued_) {
    std::string label = std::move(*queued_);
    queued_.reset();
    std::string next = observeLabel(label, resolve, now);
    if (!next.empty()) log += (log.empty() ? "" : "; ") + next;
  }
  return log;
}

std::string MigManagerModel::finish(MigConfigState state, std::string message) {
  state_ = state;
  due_.reset();
  target_.clear();
  if (state == MigConfigState::kSuccess) ++successes_;
  if (state == MigConfigState::kFailed) ++failures_;
  return fmt::format("{} -> {}", message, migConfigStateName(state));
}

}  // namespace gpuscale::sim
