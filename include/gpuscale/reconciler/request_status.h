// The status of GPUCapacityRequests: after each acting pass, each
// request a policy manages gets its Granted condition and status.observedGeneration (a malformed
// request: Granted False, reason Invalid, grantedReplicas 0; one the planner never sees: Granted
// False with explain's reason, NotManaged when no policy manages it, TargetNotFound,
// NoGpuRequest or ClaimsNotCounted for its workload, grantedReplicas as it is), written through the
// status subresource only when they change, so a steady state writes nothing.
// status.grantedReplicas itself is the ceiling the actuator raises and lowers (ceiling_holder.h).
// Each change of the condition's reason is an Event on the request: `Granted` when it becomes True,
// `Blocked` (with the condition's reason and message) otherwise.
//
// Thread safety: one pass at a time (the controller's loop).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscale/kube/client.h"
#include "gpuscale/partition/capacity_request.h"
#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/reconciler/degraded_log.h"
#include "gpuscale/reconciler/event_recorder.h"
#include "gpuscale/reconciler/hpa_state_store.h"
#include "gpuscale/reconciler/intent.h"

namespace gpuscale::reconciler {

// The merge patch (for the status subresource) that makes request `object` say `verdict`, or
// nullopt when it says so already (the Granted condition's status, reason and message, and
// status.observedGeneration equal to metadata.generation; with `writeGranted`, also
// status.grantedReplicas). Other conditions are kept; lastTransitionTime moves only when the
// condition's status changes. Pure; `object` may be malformed.
std::optional<nlohmann::json> requestStatusPatch(const nlohmann::json& object,
                                                 const partition::CapacityRequestVerdict& verdict,
                                                 bool writeGranted, TimePoint now);

// The verdict for `request` (fresh), whose demand the pass assessed as `demand`: granted is the
// request's status.grantedReplicas; `inFlight` when the state store holds an intent for it (its
// partitions are being changed); `why` the planner's answer for it (whyVerdict) when it is short.
partition::CapacityRequestVerdict requestVerdict(const partition::CapacityRequest& request,
                                                 bool inFlight, std::string_view why);

// The verdict for a request the planner never sees, from why (outsideThePlanner's "CODE:
// sentence", e.g. "NotManaged: no policy manages it ..."): Granted False, reason CODE (NotManaged,
// TargetNotFound, NoGpuRequest, ClaimsNotCounted), the sentence as the message; `granted` is kept
// (the request's status.grantedReplicas: nothing is written there). A why without a code (not
// one word of letters before ": ") gives reason NotManaged and the whole text.
partition::CapacityRequestVerdict unplannedRequestVerdict(int granted, std::string_view why);

class RequestStatusWriter {
 public:
  RequestStatusWriter(std::shared_ptr<kube::KubeClient> client,
                      std::shared_ptr<EventRecorder> events,
                      std::shared_ptr<ReconcilerMetrics> metrics);

  // Writes what changed for the requests of `snapshot`: those with a demand in `workloads`, those
  // without one (why, from `policies`: outsideThePlanner in hpa_explain.h) and the malformed ones
  // in snapshot.skipped.
  void update(const partition::ClusterSnapshot& snapshot,
              const std::vector<partition::WorkloadDemand>& workloads,
              const partition::PolicySet& policies, const partition::Plan& plan,
              const HpaStateStore& store, TimePoint now);

 private:
  // Writes `verdict` to request ns/name (uid) unless it says so already; Events on a new reason.
  void write(const std::string& ns, const std::string& name, const std::string& uid,
             const std::function<partition::CapacityRequestVerdict(const nlohmann::json&)>& verdict,
             bool writeGranted, TimePoint now);

  std::shared_ptr<kube::KubeClient> client_;
  std::shared_ptr<EventRecorder> events_;
  DegradedLog degraded_;
  std::set<std::string> answeredInvalid_;  // uid + message of malformed requests answered
};

}  // namespace gpuscale::reconciler
