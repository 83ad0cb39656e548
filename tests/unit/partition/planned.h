// One planning pass as the reconciler's pass runs it, for the planner's tests: a cluster dump's
// snapshot, the policies, the workloads assessed under them and the plan; and the policy files
// those tests plan under.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpuscale/partition/demand.h"
#include "gpuscale/partition/plan.h"
#include "gpuscale/partition/planner.h"
#include "kube_objects.h"

namespace gpuscale::partition::testing {

// The policy file `yaml`; one that does not parse fails the test (the result is then empty).
inline PolicySet policiesFrom(const std::string& yaml) {
  auto set = parsePolicies(yaml);
  EXPECT_TRUE(set.ok()) << set.status().toString();
  return set.ok() ? *set : PolicySet{};
}

// Owns everything the plan points into (workloads point at the snapshot and the policies), so a
// test holds it by pointer.
struct Planned {
  ClusterSnapshot snapshot;
  PolicySet policies;
  std::vector<WorkloadDemand> workloads;
  Plan plan;
};

// Plans `dump` under `policies` at `now`. `adjust` stands for what the reconciler adds to the
// snapshot before its pass reads it (the state store's records, a per-GPU mapping, intents in
// flight).
inline std::unique_ptr<Planned> planned(const json& dump, PolicySet policies, TimePoint now = kNow,
                                        const std::function<void(ClusterSnapshot&)>& adjust = {}) {
  auto p = std::make_unique<Planned>();
  p->snapshot = snapshotOf(dump);
  if (adjust) adjust(p->snapshot);
  p->policies = std::move(policies);
  p->workloads = assessWorkloads(p->snapshot, p->policies);
  p->plan = planPartitions(p->snapshot, p->workloads, now);
  return p;
}

// The plan's actions as JSON, without the MIG configs they carry.
inline json actionsWithoutConfig(const Plan& plan) {
  json a = json::parse(planToJson(plan).dump())["actions"];
  for (auto& action : a) action.erase("config");
  return a;
}

}  // namespace gpuscale::partition::testing
