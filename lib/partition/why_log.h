// How the planner records why it did or did not raise each HPA (why_not.h): the bookkeeping and
// the reasons derived from what the planner checks, kept apart so planner.cpp stays about
// deciding.
//
// Thread safety: a WhyLog belongs to one planning pass; the free functions are pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/partition/snapshot.h"
#include "gpuscale/partition/why_not.h"

namespace gpuscale::partition {

// Why the planner may not change node `n` under `policy` at all (an operation in flight, backing
// off, in a MIG transition, outside the nodeSelector); nullopt when it may.
std::optional<WhyReason> nodeUnchangeable(const NodeState& n, const Policy& policy, TimePoint now);

// Why a changeable node cannot be reshaped at all (no MIG-capable model, unknown geometry, MIG
// strategy none, GPU pods on a single-strategy node).
WhyReason nodeNotReshapeable(const NodeState& n);

// Why no idle GPU of a mixed-strategy node gave a pod: `busy` of its `migGpus` MIG-enabled GPUs
// hold pods (by the per-GPU mapping, or all of them by the node-level rule).
WhyReason noReshapeGain(const NodeState& n, int migGpus, int busy);

// Why raising time-slicing on `node` from `replicas` up to `limit` gave no pod (the policy's
// per-device limit, the memory limit below it, or no gain).
WhyReason noTimeSlicingGain(const std::string& node, const std::string& base, int replicas,
                            int limit, const Policy& policy);

class WhyLog {
 public:
  // The record of `d`, started from the demand on first use.
  HpaWhy& of(const WorkloadDemand& d);
  void add(const WorkloadDemand& d, WhyReason reason) {
    of(d).reasons.push_back(std::move(reason));
  }
  // Growth of `d` starts: within the cooldown since `lastChange`.
  void cooldown(const WorkloadDemand& d, TimePoint now);
  // Growth of `d` starts: the policy's cap and the aim.
  void aiming(const WorkloadDemand& d, int cap, int aim);
  // Growth of `d` ended with `after` pods' room, `need` short of the aim.
  void grown(const WorkloadDemand& d, int after, int need);
  // The record of `d` once every decision is made: its maxReplicas change (nullptr: none) and its
  // share of contended capacity ("" when not contended).
  HpaWhy finish(const WorkloadDemand& d, const SetMaxReplicas* change, const std::string& share);

 private:
  std::map<const WorkloadDemand*, HpaWhy> why_;
};

}  // namespace gpuscale::partition
