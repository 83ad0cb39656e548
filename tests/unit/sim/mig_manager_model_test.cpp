#include "gpuscale/sim/mig_manager_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuscale::sim {
namespace mig_manager_model_test {

using partition::MigGpuSetting;
using std::chrono::seconds;
using ::testing::HasSubstr;

const MigGpuSetting kSeven{true, {{"1g.5gb", 7}}};
const MigGpuSetting kTwo3g{true, {{"3g.20gb", 2}}};

// Named configs for a two-GPU node: "all-1g", "all-3g", "gpu1-3g" (only GPU 1 changes),
// "ones-again" (the same geometry as "all-1g" under another name).
std::optional<std::vector<MigGpuSetting>> resolve(const std::string& name,
                                                  const std::vector<MigGpuSetting>& current) {
  if (name == "all-1g") return std::vector{kSeven, kSeven};
  if (name == "all-3g") return std::vector{kTwo3g, kTwo3g};
  if (name == "gpu1-3g") return std::vector{current[0], kTwo3g};
  if (name == "ones-again") return std::vector{kSeven, kSeven};
  return std::nullopt;
}

GpuNodeSpec node(std::vector<InjectedFailure> failures = {}) {
  GpuNodeSpec n;
  n.name = "a100";
  n.gpus = 2;
  n.failures = std::move(failures);
  return n;
}

// One step of a scenario: at time t (seconds), optionally observe a label, then tick with busy
// GPUs.
struct Step {
  int t;
  const char* label;  // nullptr: no label observation
  std::set<int> busy;
  MigConfigState state;
  bool paused;
  std::vector<MigGpuSetting> gpus;
  const char* log;  // substring of the step's log ("" = no log)
};

struct Case {
  const char* what;
  std::vector<InjectedFailure> failures;
  std::vector<Step> steps;
};

// Plays `steps` on `model` and checks the state, the pause, the GPUs and the log after each.
void play(MigManagerModel& model, const std::vector<Step>& steps, const MigConfigResolver& resolver,
          const std::string& what) {
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const auto now = SteadyTime{} + seconds(s.t);
    std::string log;
    if (s.label != nullptr) log += model.observeLabel(s.label, resolver, now);
    log += model.tick(now, s.busy, resolver);
    const std::string at = what + " (step " + std::to_string(i) + ")";
    EXPECT_EQ(model.state(), s.state) << at;
    EXPECT_EQ(model.paused(), s.paused) << at;
    EXPECT_EQ(model.gpus(), s.gpus) << at;
    if (*s.log == '\0') {
      EXPECT_TRUE(s.label != nullptr || log.empty()) << at << ": " << log;
    } else {
      EXPECT_THAT(log, HasSubstr(s.log)) << at;
    }
  }
}

TEST(MigManagerModelTest, StateMachine) {
  using S = MigConfigState;
  const std::vector<MigGpuSetting> ones{kSeven, kSeven}, threes{kTwo3g, kTwo3g},
      mixed{kSeven, kTwo3g};
  const Case cases[] = {
      {"idle node: pending, paused, then success with the new geometry after the delay",
       {},
       {{0, "all-3g", {}, S::kPending, true, ones, "pending"},
        {4, nullptr, {}, S::kPending, true, ones, ""},
        {5, nullptr, {}, S::kSuccess, false, threes, "applied"}}},
      {"same label again does nothing", {}, {{0, "all-1g", {}, S::kSuccess, false, ones, ""}}},
      {"unknown config fails at once without pausing",
       {},
       {{0, "nope", {}, S::kFailed, false, ones, "not in any mig-parted ConfigMap"}}},
      {"a config equal to the current geometry succeeds at once",
       {},
       {{0, "ones-again", {}, S::kSuccess, false, ones, "already applied"}}},
      {"a change during a run is queued and runs after it",
       {},
       {{0, "all-3g", {}, S::kPending, true, ones, "pending"},
        {1, "ones-again", {}, S::kPending, true, ones, "queued"},
        {5, nullptr, {}, S::kPending, true, threes, "reconfiguration 2"},
        {10, nullptr, {}, S::kSuccess, false, ones, "applied"}}},
      {"a busy GPU that must be rebuilt fails the run; the old geometry stays",
       {},
       {{0, "all-3g", {1}, S::kPending, true, ones, "pending"},
        {5, nullptr, {1}, S::kFailed, false, ones, "GPU 1 in use"}}},
      {"a busy GPU that keeps its geometry does not block",
       {},
       {{0, "gpu1-3g", {0}, S::kPending, true, ones, "pending"},
        {5, nullptr, {0}, S::kSuccess, false, mixed, "applied"}}},
      {"re-setting the label after a failure does nothing; a new value retries",
       {},
       {{0, "all-3g", {0}, S::kPending, true, ones, ""},
        {5, nullptr, {0}, S::kFailed, false, ones, "in use"},
        {6, "all-3g", {}, S::kFailed, false, ones, ""},
        {7, "gpu1-3g", {0}, S::kPending, true, ones, "reconfiguration 2"},
        {12, nullptr, {0}, S::kSuccess, false, mixed, "applied"}}},
      {"injected failure on the 2nd reconfiguration only",
       {{2, FailureMode::kFail}},
       {{0, "all-3g", {}, S::kPending, true, ones, ""},
        {5, nullptr, {}, S::kSuccess, false, threes, "applied"},
        {6, "all-1g", {}, S::kPending, true, threes, ""},
        {11, nullptr, {}, S::kFailed, false, threes, "injected failure"}}},
      {"hang: pending and paused for ever",
       {{std::nullopt, FailureMode::kHang}},
       {{0, "all-3g", {}, S::kPending, true, ones, ""},
        {1000, nullptr, {}, S::kPending, true, ones, ""}}},
      {"hang-rebooting: pending for the delay, then rebooting for ever",
       {{std::nullopt, FailureMode::kHangRebooting}},
       {{0, "all-3g", {}, S::kPending, true, ones, "pending"},
        {5, nullptr, {}, S::kRebooting, true, ones, "never returns"},
        {1000, nullptr, {}, S::kRebooting, true, ones, ""}}},
      {"ignore: the state label never changes",
       {{std::nullopt, FailureMode::kIgnore}},
       {{0, "all-3g", {}, S::kSuccess, false, ones, "ignores"},
        {100, nullptr, {}, S::kSuccess, false, ones, ""}}},
  };
  for (const auto& c : cases) {
    MigManagerModel model(node(c.failures), seconds(5), "all-1g", {kSeven, kSeven});
    play(model, c.steps, resolve, c.what);
  }
}

const MigGpuSetting kDisabled{false, {}};

// Configs for mode changes on a two-GPU node that starts as GPU 0 all-1g.5gb, GPU 1 MIG disabled:
// "enable-1" (GPU 1 to seven 1g.5gb), "disable-1" (GPU 1 back to MIG disabled).
std::optional<std::vector<MigGpuSetting>> resolveMode(const std::string& name,
                                                      const std::vector<MigGpuSetting>& current) {
  if (name == "enable-1") return std::vector{current[0], kSeven};
  if (name == "disable-1") return std::vector{current[0], kDisabled};
  if (name == "gpu0-3g") return std::vector{kTwo3g, current[1]};
  return std::nullopt;
}

struct ModeCase {
  const char* what;
  bool reboots;
  std::vector<Step> steps;
};

TEST(MigManagerModelTest, ModeChange) {
  using S = MigConfigState;
  const std::vector<MigGpuSetting> before{kSeven, kDisabled}, enabled{kSeven, kSeven},
      reshaped{kTwo3g, kDisabled};
  // Geometry changes take 5 s, mode changes 20 s, a reboot 60 s.
  const ModeCase cases[] = {
      {"idle node: pending for the longer mode-change delay, then success",
       false,
       {{0, "enable-1", {}, S::kPending, true, before, "MIG mode change"},
        {5, nullptr, {}, S::kPending, true, before, ""},
        {19, nullptr, {}, S::kPending, true, before, ""},
        {20, nullptr, {}, S::kSuccess, false, enabled, "applied"}}},
      {"a platform that needs a reboot: pending, rebooting (operands paused), success",
       true,
       {{0, "enable-1", {}, S::kPending, true, before, "pending"},
        {20, nullptr, {}, S::kRebooting, true, before, "rebooting"},
        {79, nullptr, {}, S::kRebooting, true, before, ""},
        {80, nullptr, {}, S::kSuccess, false, enabled, "node rebooted, applied"}}},
      {"a pod on the GPU whose mode changes fails the run",
       false,
       {{0, "enable-1", {1}, S::kPending, true, before, ""},
        {20, nullptr, {1}, S::kFailed, false, before, "GPU 1 in use"}}},
      {"a pod on another GPU of the node fails it too: the reset takes every GPU",
       true,
       {{0, "enable-1", {0}, S::kPending, true, before, ""},
        {20, nullptr, {0}, S::kFailed, false, before, "resets every GPU of the node"}}},
      {"a geometry change beside a MIG-disabled GPU keeps the short delay and per-GPU rule",
       true,
       {{0, "gpu0-3g", {1}, S::kPending, true, before, ""},
        {5, nullptr, {1}, S::kSuccess, false, reshaped, "applied"}}},
      {"give-back: disabling MIG again is a mode change as well",
       false,
       {{0, "enable-1", {}, S::kPending, true, before, ""},
        {20, nullptr, {}, S::kSuccess, false, enabled, "applied"},
        {30, "disable-1", {}, S::kPending, true, enabled, "MIG mode change"},
        {50, nullptr, {}, S::kSuccess, false, before, "applied"}}},
      {"a label change while rebooting is queued until the node is back",
       true,
       {{0, "enable-1", {}, S::kPending, true, before, ""},
        {20, nullptr, {}, S::kRebooting, true, before, "rebooting"},
        {30, "disable-1", {}, S::kRebooting, true, before, "queued"},
        {80, nullptr, {}, S::kPending, true, enabled, "reconfiguration 2"}}},
  };
  for (const auto& c : cases) {
    MigModeChangeSpec mode;
    mode.delay = seconds(20);
    mode.reboots = c.reboots;
    mode.rebootDelay = seconds(60);
    MigManagerModel model(node(), seconds(5), "start", before, mode);
    play(model, c.steps, resolveMode, c.what);
  }
}

TEST(MigManagerModelTest, RebootingStateName) {
  EXPECT_EQ(migConfigStateName(MigConfigState::kRebooting), "rebooting");
}

TEST(MigManagerModelTest, DeadlineIsTheEndOfThePendingRun) {
  MigManagerModel model(node(), seconds(5), "all-1g", {kSeven, kSeven});
  EXPECT_FALSE(model.deadline());
  (void)model.observeLabel("all-3g", resolve, SteadyTime{} + seconds(10));
  ASSERT_TRUE(model.deadline());
  EXPECT_EQ(*model.deadline(), SteadyTime{} + seconds(15));
  EXPECT_EQ(model.reconfigurations(), 1);
}

}  // namespace mig_manager_model_test
}  // namespace gpuscale::sim
