// Capacity requests (capacity_request.h): the reader, and the planner granting requests beside
// HPAs under the contention rule.
#include "gpuscale/partition/capacity_request.h"

#include <gtest/gtest.h>

#include "gpuscale/partition/planner.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace capacity_request_test {

using testing::json;

// A request in `ns` managed by policy `default`; `spec` is its spec.
json request(const std::string& name, json spec, int granted = -1,
             const std::string& ns = "default") {
  json r{{"apiVersion", "gpuscale.io/v1alpha1"},
         {"kind", "GPUCapacityRequest"},
         {"metadata",
          {{"name", name},
           {"namespace", ns},
           {"uid", "uid-" + name},
           {"generation", 2},
           {"annotations", {{"gpuscale.io/partition-policy", "default"}}}}},
         {"spec", std::move(spec)}};
  if (granted >= 0) r["status"] = {{"grantedReplicas", granted}};
  return r;
}

json forResource(int replicas, std::optional<int> priority = std::nullopt) {
  json spec{{"resource", testing::k1g}, {"replicas", replicas}};
  if (priority) spec["priority"] = *priority;
  return spec;
}

struct ReadRow {
  const char* what;
  json spec;
  std::string error;  // "" when it reads
};

TEST(CapacityRequestTest, ReadsTheSpecAndRejectsWhatTheSchemaForbids) {
  const std::vector<ReadRow> rows{
      {"a resource", forResource(4, 10), ""},
      {"a workload",
       {{"workloadRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "t"}}},
        {"replicas", 3}},
       ""},
      {"neither", {{"replicas", 3}}, "spec must be exactly one of workloadRef and resource"},
      {"both",
       {{"workloadRef", {{"kind", "Deployment"}, {"name", "t"}}},
        {"resource", testing::k1g},
        {"replicas", 1}},
       "spec must be exactly one of workloadRef and resource"},
      {"a workloadRef without a name",
       {{"workloadRef", {{"kind", "Deployment"}}}, {"replicas", 1}},
       "spec.workloadRef must be a kind and a name"},
      {"a resource outside nvidia.com/",
       {{"resource", "cpu"}, {"replicas", 1}},
       "spec.resource must be an nvidia.com/ resource (nvidia.com/mig-1g.5gb)"},
      {"negative replicas", forResource(-1), "replicas must be an integer in [0, 2147483647]"},
      {"replicas of the wrong type",
       {{"resource", testing::k1g}, {"replicas", "3"}},
       "replicas must be an integer"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto r = readCapacityRequest(request("r", row.spec, 2));
    if (row.error.empty()) {
      ASSERT_TRUE(r.ok()) << r.status().toString();
      EXPECT_EQ(r->meta.name, "r");
      EXPECT_EQ(r->generation, 2);
      EXPECT_EQ(r->grantedReplicas, 2);
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().message(), row.error);
    }
  }
  auto r = readCapacityRequest(request("r", forResource(4, 10)));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->resource, testing::k1g);
  EXPECT_EQ(r->replicas, 4);
  EXPECT_EQ(r->priority, 10);
}

TEST(CapacityRequestTest, TheSnapshotPlansARequestAsAnHpaAndSkipsOneThatDoesNotRead) {
  const ClusterSnapshot snap = testing::snapshotOf(
      testing::list({request("good", forResource(3), 1), request("bad", {{"replicas", 3}})}));
  ASSERT_EQ(snap.hpas.size(), 1u);
  const HpaState& h = snap.hpas.front();
  EXPECT_EQ(h.name, "GPUCapacityRequest.good");
  EXPECT_EQ(capacityRequestName(h.name), "good");
  EXPECT_EQ(capacityRequestName("good"), std::nullopt);
  EXPECT_EQ(h.maxReplicas, 1);
  EXPECT_EQ(h.ceilingField(), "GPUCapacityRequest good status.grantedReplicas");
  ASSERT_NE(h.capacityRequest, nullptr);
  ASSERT_EQ(snap.skipped.size(), 1u);
  EXPECT_EQ(snap.skipped.front().kind, "GPUCapacityRequest");
  EXPECT_EQ(snap.skipped.front().name, "bad");
  EXPECT_EQ(snap.skipped.front().reason, "malformed");
}

const char* const kPolicy =
    "policies:\n- name: default\n  hpaNamespaces: [default, other]\n  levers: [timeSlicing]\n"
    "  timeSlicing: {maxReplicas: 2}\n";
// No lever that applies here (the node's one GPU is busy at all-1g.5gb): only free partitions.
const char* const kNoLeverPolicy =
    "policies:\n- name: default\n  hpaNamespaces: [default, other]\n  levers: [migReshape]\n";

struct PlanRow {
  const char* what;
  std::vector<json> objects;  // beside one A100 at all-1g.5gb (7 free instances)
  json maxChanges;            // {name: new granted or maxReplicas}
  int timeSlicedTo;           // 1g.5gb replicas after the plan (1: unchanged)
  const char* policy;
  std::string appShare;  // what the plan says of HPA app's share ("": no share)
};

TEST(CapacityRequestTest, GrantsRequestsBesideHpasUnderTheContentionRule) {
  using testing::gpuPod;
  const std::string r1 = "GPUCapacityRequest.r1", r2 = "GPUCapacityRequest.r2";
  std::vector<PlanRow> rows{
      {"free partitions are granted without a change",
       {request("r1", forResource(4))},
       {{r1, 4}},
       1,
       kPolicy,
       ""},
      {"a request beyond the free partitions time-slices them",
       {request("r1", forResource(10))},
       {{r1, 10}},
       2,
       kPolicy,
       ""},
      {"a met request changes nothing",
       {request("r1", forResource(4), 4)},
       json::object(),
       1,
       kPolicy,
       ""},
      {"a request that falls gives the rest back",
       {request("r1", forResource(2), 5)},
       {{r1, 2}},
       1,
       kPolicy,
       ""},
      {"two requests: the higher priority is served first",
       {request("r1", forResource(10, 0)), request("r2", forResource(10, 5))},
       {{r1, 4}, {r2, 10}},
       2,
       kPolicy,
       ""},
      {"a grant is held against a later HPA: the HPA gets what the grant leaves",
       [] {
         std::vector<json> items{request("r1", forResource(5), 5, "other")};
         testing::append(items, testing::blockedApp("app", testing::k1g, "gpu-1", 2, 5));
         return items;
       }(),
       json::object(), 1, kNoLeverPolicy, "granted 0 of 5"},
      {"without the grant the HPA's pending pods fit",
       testing::blockedApp("app", testing::k1g, "gpu-1", 2, 5), json::object(), 1, kNoLeverPolicy,
       ""},
      {"a request for a workload counts its running pods",
       [] {
         std::vector<json> items{
             testing::deployment("default", "app", 3, testing::k1g),
             request("r1", {{"workloadRef",
                             {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "app"}}},
                            {"replicas", 6}})};
         for (int i = 0; i < 3; ++i)
           items.push_back(gpuPod("default", "app", i, testing::k1g, "gpu-1"));
         return items;
       }(),
       {{r1, 6}},
       1,
       kPolicy,
       ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto policies = parsePolicies(row.policy);
    ASSERT_TRUE(policies.ok()) << policies.status().toString();
    std::vector<json> items{
        testing::migNode("gpu-1", testing::kA100, 1, "all-1g.5gb", {{"1g.5gb", 7}})};
    for (const auto& o : row.objects) items.push_back(o);
    const ClusterSnapshot snap = testing::snapshotOf(testing::migCluster(items));
    const auto workloads = assessWorkloads(snap, *policies, testing::kNow);
    const Plan plan = planPartitions(snap, workloads, testing::kNow);
    EXPECT_EQ(testing::maxChangesOf(plan), row.maxChanges) << planToText(plan);
    int replicas = 1;
    for (const auto& a : plan.actions) {
      if (const auto* t = std::get_if<TimeSlicingChange>(&a)) replicas = t->replicas;
    }
    EXPECT_EQ(replicas, row.timeSlicedTo) << planToText(plan);
    std::string share;
    for (const auto& d : plan.demands) {
      if (d.name == "app") share = d.explain;
    }
    if (row.appShare.empty()) {
      EXPECT_EQ(share, "") << planToText(plan);
    } else {
      EXPECT_NE(share.find(row.appShare), std::string::npos) << planToText(plan);
    }
  }
}

TEST(CapacityRequestTest, APriorityNeverOutranksThePodsAdmittedPriority) {
  Policy policy;
  PodState pod;
  pod.phase = "Running";
  pod.priority = 5;
  CapacityRequest r;
  r.priority = 100;
  EXPECT_EQ(requestPriority(policy, r, {}).value, 100) << "no pods: the request's own";
  const WorkloadPriority capped = requestPriority(policy, r, {&pod});
  EXPECT_EQ(capped.value, 5);
  EXPECT_EQ(capped.source,
            "request spec.priority 100 capped by pods' spec.priority (lowest of 1 pod)");
  r.priority = 1;
  EXPECT_EQ(requestPriority(policy, r, {&pod}).value, 1) << "below the pods' is kept";
  policy.name = "p";
  policy.priority = 50;
  EXPECT_EQ(requestPriority(policy, r, {&pod}).value, 50) << "the policy's wins";
}

TEST(CapacityRequestTest, TheGrantedConditionSaysHowFarTheRequestGot) {
  struct Row {
    const char* what;
    int wanted, granted;
    bool inFlight, changing;
    const char* status;
    const char* reason;
  };
  const std::vector<Row> rows{
      {"all of it", 4, 4, false, false, "True", "Granted"},
      {"more than asked (a request that fell)", 2, 3, false, false, "True", "Granted"},
      {"a node operation runs for it", 4, 1, true, false, "False", "WaitingForReshape"},
      {"this pass starts one", 4, 0, false, true, "False", "WaitingForReshape"},
      {"part, nothing more coming", 4, 2, false, false, "False", "PartiallyGranted"},
      {"nothing", 4, 0, false, false, "False", "Unsatisfiable"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    const auto v =
        capacityRequestVerdict(row.wanted, row.granted, row.inFlight, row.changing, "short");
    EXPECT_EQ(v.granted, row.granted);
    EXPECT_EQ(v.condition.type, "Granted");
    EXPECT_EQ(v.condition.status, row.status);
    EXPECT_EQ(v.condition.reason, row.reason);
  }
  EXPECT_EQ(invalidCapacityRequest("spec must be x").condition.reason, "Invalid");
}

}  // namespace capacity_request_test
}  // namespace gpuscale::partition
