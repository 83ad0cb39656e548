// Observe mode (`gpuscale-reconciler run --mode=observe`, the chart's default): the reconciler
// watches, plans, serves /plan, /metrics and `explain`, and records Events, but changes nothing in
// the cluster: no node label, taint or annotation, no ConfigMap, no maxReplicas, no state store
// entry. It is the safe first install: read what it would do, then switch to --mode=act.
//
// Two decorators at the seams make it so:
// - ObservingActuator stands in for the actuator: apply() takes no action; each plan action is
//   recorded as a Normal Event `WouldAct` on the object it would change (the Node for a MIG or
//   sharing change, the HPA for maxReplicas) and counted (gpuscale_reconciler_would_act_total),
//   once while the action stays in the plan (a new action, or one that left and came back, is
//   news again).
// - ObservingKubeClient stands in for the client the controller and the actuator write through:
//   reads and watches pass through; create, update, patch and remove are not sent but counted
//   (gpuscale_reconciler_would_be_writes_total{verb,resource}) and logged once per verb and
//   resource, and answer as the API server would have (the object as written; a patch applied to
//   the object as read), so a caller goes on as after a real write. Events and the leader Lease
//   do not go through it: in observe mode they are the only writes.
//
// Thread safety: ObservingKubeClient is thread-safe if the inner client is; ObservingActuator's
// apply() is called from one thread at a time (as every Actuator's).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/kube/forwarding_client.h"
#include "gpuscale/reconciler/actuator.h"
#include "gpuscale/reconciler/event_recorder.h"
#include "gpuscale/reconciler/reconciler_metrics.h"

namespace gpuscale::reconciler {

// What `run --mode` takes: act (the default of the program) or observe (the chart's default).
enum class RunMode { kAct, kObserve };
std::optional<RunMode> parseRunMode(std::string_view text);  // "act" | "observe"
std::string_view runModeName(RunMode mode);

class ObservingKubeClient final : public kube::ForwardingKubeClient {
 public:
  // `metrics` may be null (nothing counted).
  ObservingKubeClient(std::shared_ptr<kube::KubeClient> inner,
                      std::shared_ptr<ReconcilerMetrics> metrics);

  // Writes withheld so far (for tests and logs).
  int withheld() const { return withheld_.load(); }

 protected:
  // Sends nothing. The answer: the object as given (create, update), the object as read with the
  // patch applied (a read that fails, or a JSON patch that does not apply, is that error), or
  // success (delete).
  core::Result<kube::Object> write(const WriteCall& call, const Send& send) override;

 private:
  std::shared_ptr<ReconcilerMetrics> metrics_;
  std::atomic<int> withheld_{0};
  std::mutex mu_;
  std::set<std::string> logged_;  // "<verb> <resource>" already logged
};

class ObservingActuator final : public Actuator {
 public:
  // `metrics` may be null.
  ObservingActuator(std::shared_ptr<EventRecorder> events,
                    std::shared_ptr<ReconcilerMetrics> metrics);

  // Records and counts the plan's new actions; takes none (the report is empty).
  ActuationReport apply(const partition::Plan& plan, const ClusterState& state,
                        TimePoint now) override;

 private:
  std::shared_ptr<EventRecorder> events_;
  std::shared_ptr<ReconcilerMetrics> metrics_;
  std::set<std::string> reported_;  // the actions (as text) of the last plan
};

}  // namespace gpuscale::reconciler
