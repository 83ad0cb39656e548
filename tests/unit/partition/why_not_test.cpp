#include "gpuscale/partition/why_not.h"

#include <gtest/gtest.h>

#include <functional>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/planner.h"
#include "kube_objects.h"
#include "planned.h"

namespace gpuscale::partition {
namespace why_not_test {

using testing::json;
using testing::k1g;
using testing::kA100;
using testing::kNow;

std::vector<std::string> codes(const HpaWhy& why) { return testing::whyCodes(why); }

// An A100 of 7 x 1g.5gb holding `pods` pods of app (busy), the HPA blocked with one more pending.
std::vector<json> busyA100(int pods = 7) {
  std::vector<json> items{testing::migNode("a100-busy", kA100, 1, "all-1g.5gb", {{"1g.5gb", 7}})};
  testing::append(items, testing::blockedApp("app", k1g, "a100-busy", pods, 1));
  return items;
}

struct Row {
  const char* what;
  std::vector<json> items;
  std::string policy;  // "" = the built-in default
  std::function<void(ClusterSnapshot&)> adjust;
  std::vector<std::string> codes;  // of the HPA default/app, in order
  std::string verdict;             // a substring of whyVerdict()
};

TEST(WhyNotTest, ThePlannerSaysWhyEachHpaWasOrWasNotRaised) {
  const std::string base = "name: default\nhpaNamespaces: [default]\n";
  auto idle = [](const std::string& name, const std::string& config) {
    return testing::migNode(name, kA100, 1, config, {{"3g.20gb", 2}});
  };
  auto withNode = [](std::vector<json> items, json node) {
    items.push_back(std::move(node));
    return items;
  };
  auto labelled = [&](const std::string& key, const std::string& value) {
    json node = idle("a100-idle", "all-3g.20gb");
    node["metadata"]["labels"][key] = value;
    return node;
  };
  // Two pods of app on a free A100; the HPA at `max`, limited by it or not.
  auto notBlocked = [](int max, bool limited) {
    std::vector<json> items{testing::migNode("a100", kA100, 1, "all-1g.5gb", {{"1g.5gb", 7}}),
                            testing::deployment("default", "app", 2, k1g)};
    for (int i = 0; i < 2; ++i) items.push_back(testing::gpuPod("default", "app", i, k1g, "a100"));
    items.push_back(testing::hpa(
        "default", "app", testing::hpaSpec(1, max, 2, 2, limited ? "100" : "50", "50", limited)));
    return items;
  };
  // busyA100() with the Deployment pinned to a pool no node is in.
  auto nowhere = [] {
    std::vector<json> items = busyA100();
    for (auto& item : items) {
      if (item["kind"] == "Deployment")
        item["spec"]["template"]["spec"]["nodeSelector"] = {{"pool", "none"}};
    }
    return items;
  };
  const std::vector<Row> rows{
      {"held by its own maxReplicas, below what the partitions hold",
       notBlocked(2, true),
       "",
       nullptr,
       {"NotBlocked"},
       "not raised: NotBlocked: held by its own maxReplicas 2, below the 7 pods"},
      {"no schedulable node matches the pods' nodeSelector",
       nowhere(),
       "",
       nullptr,
       {"NoEligibleNodes", "Shortfall"},
       "not raised: NoEligibleNodes"},
      {"raised earlier, demand fell: maxReplicas goes back",
       notBlocked(14, false),
       "",
       [](ClusterSnapshot& s) { s.hpas.front().originalMaxReplicas = 7; },
       {"NotBlocked", "Lowered"},
       "lowered maxReplicas 14 -> 7 (giving isolation back)"},
      {"within maxReplicas: nothing to raise",
       notBlocked(7, false),
       "",
       nullptr,
       {"NotBlocked"},
       "not raised: NotBlocked: wants 2 replicas"},
      {"busy GPU, time-slicing raises it",
       busyA100(),
       "",
       nullptr,
       {"a100-busy/GpusBusy", "a100-busy/TimeSliced", "Raised"},
       "raised maxReplicas 8 -> 14"},
      {"busy GPU already at the time-slicing limit: a shortfall",
       busyA100(),
       base + "timeSlicing: {maxReplicas: 1}\n",
       nullptr,
       {"a100-busy/GpusBusy", "a100-busy/ReplicaLimit", "Shortfall"},
       "not raised: Shortfall: aims at 14 pods"},
      {"per-pod memory below the policy's limit",
       busyA100(),
       base + "timeSlicing: {maxReplicas: 4, perPodGpuMemory: 5G}\n",
       nullptr,
       {"a100-busy/GpusBusy", "a100-busy/MemoryLimit", "Shortfall"},
       "Shortfall"},
      {"an idle node is reshaped first",
       withNode(busyA100(), idle("a100-idle", "all-3g.20gb")),
       "",
       nullptr,
       {"a100-busy/GpusBusy", "a100-idle/Reshaped", "Raised"},
       "raised"},
      {"a node in a MIG transition is left alone",
       withNode(busyA100(), labelled("nvidia.com/mig.config.state", "pending")),
       base + "levers: [migReshape]\n",
       nullptr,
       {"a100-busy/GpusBusy", "a100-idle/NodeMigTransition", "Shortfall"},
       "Shortfall"},
      {"no mig-manager reports the node's MIG state (empty): never reshaped",
       withNode(busyA100(), labelled("nvidia.com/mig.config.state", "")),
       base + "levers: [migReshape]\n",
       nullptr,
       {"a100-busy/GpusBusy", "a100-idle/MigNotManaged", "Shortfall"},
       "Shortfall"},
      {"no mig-manager on the node at all (no state label): never reshaped",
       withNode(busyA100(),
                [&] {
                  json node = idle("a100-idle", "all-3g.20gb");
                  node["metadata"]["labels"].erase("nvidia.com/mig.config.state");
                  return node;
                }()),
       base + "levers: [migReshape]\n",
       nullptr,
       {"a100-busy/GpusBusy", "a100-idle/MigNotManaged", "Shortfall"},
       "Shortfall"},
      {"a node outside the nodeSelector is left alone",
       withNode(busyA100(), labelled("pool", "other")),
       base + "levers: [migReshape]\nnodeSelector: {pool: gpu}\n",
       nullptr,
       {"a100-busy/NodeNotSelected", "a100-idle/NodeNotSelected", "Shortfall"},
       "Shortfall"},
      {"a pool the policy excludes (its MIG profile fixed by the platform)",
       withNode(busyA100(), labelled("cloud.google.com/gke-gpu-partition-size", "3g.20gb")),
       base + "levers: [migReshape]\nexcludeNodes:\n- matchExpressions:\n"
              "  - {key: cloud.google.com/gke-gpu-partition-size, operator: Exists}\n",
       nullptr,
       {"a100-busy/GpusBusy", "a100-idle/NodeNotSelected", "Shortfall"},
       "Shortfall"},
      {"an operation in flight on the node (the controller marks it in transition)",
       withNode(busyA100(), idle("a100-idle", "all-3g.20gb")),
       base + "levers: [migReshape]\n",
       [](ClusterSnapshot& s) {
         auto& n = s.nodes[*s.nodeIndex("a100-idle")];
         n.hasIntent = n.inTransition = true;
       },
       {"a100-busy/GpusBusy", "a100-idle/NodeOperationInFlight", "Shortfall"},
       "Shortfall"},
      {"a node backing off after a failure",
       withNode(busyA100(), idle("a100-idle", "all-3g.20gb")),
       base + "levers: [migReshape]\n",
       [](ClusterSnapshot& s) {
         auto& n = s.nodes[*s.nodeIndex("a100-idle")];
         n.backoffUntil = kNow + std::chrono::minutes(5);
         n.inTransition = true;
       },
       {"a100-busy/GpusBusy", "a100-idle/NodeBackoff", "Shortfall"},
       "Shortfall"},
      {"the per-GPU mapping reports every GPU busy",
       busyA100(),
       base + "levers: [migReshape]\n",
       [](ClusterSnapshot& s) { s.nodes[0].gpuMapped = true; },
       {"a100-busy/GpusBusy", "Shortfall"},
       "Shortfall"},
      {"a profile the policy does not allow",
       withNode(busyA100(), idle("a100-idle", "all-3g.20gb")),
       base + "levers: [migReshape]\nmigProfiles: [3g.20gb]\n",
       nullptr,
       {"a100-busy/ProfileNotAllowed", "a100-idle/ProfileNotAllowed", "Shortfall"},
       "Shortfall"},
      {"at the policy's hard cap: the pending pod gets a partition, maxReplicas stays",
       busyA100(),
       base + "maxReplicas: {hard: 8}\n",
       nullptr,
       {"AtPolicyCap", "a100-busy/GpusBusy", "a100-busy/TimeSliced"},
       "partitions grow within maxReplicas 8; not raised: AtPolicyCap: the HPA wants 14 but the "
       "policy caps maxReplicas at 8"},
  };
  for (const auto& row : rows) {
    ClusterSnapshot snapshot = testing::snapshotOf(testing::migCluster(row.items));
    if (row.adjust) row.adjust(snapshot);
    const PolicySet policies =
        row.policy.empty() ? defaultPolicies() : testing::policiesFrom(row.policy);
    const auto workloads = assessWorkloads(snapshot, policies);
    const Plan plan = planPartitions(snapshot, workloads, kNow);
    ASSERT_EQ(plan.why.size(), 1u) << row.what;
    const HpaWhy& why = plan.why.front();
    EXPECT_EQ(codes(why), row.codes) << row.what << "\n" << whyToText(why);
    EXPECT_NE(whyVerdict(why).find(row.verdict), std::string::npos)
        << row.what << ": " << whyVerdict(why);
  }
}

TEST(WhyNotTest, CooldownAndJsonShape) {
  ClusterSnapshot snapshot = testing::snapshotOf(testing::migCluster(busyA100()));
  snapshot.hpas.front().lastChange = kNow - std::chrono::seconds(20);
  const PolicySet policies =
      testing::policiesFrom("name: default\nhpaNamespaces: [default]\ncooldown: {scaleUp: 1m}\n");
  const auto workloads = assessWorkloads(snapshot, policies);
  const Plan plan = planPartitions(snapshot, workloads, kNow);
  ASSERT_EQ(plan.why.size(), 1u);
  EXPECT_EQ(json::parse(whyToJson(plan.why.front()).dump()), json::parse(R"({
      "namespace": "default", "name": "app", "policy": "default",
      "resource": "nvidia.com/mig-1g.5gb", "blocked": true, "demand": "Unschedulable",
      "maxReplicas": 8, "ceiling": 7, "wanted": 14,
      "verdict": "not raised: ScaleUpCooldown: changed 20s ago, cooldown.scaleUp is 60s",
      "reasons": [{"code": "ScaleUpCooldown", "detail": "changed 20s ago, cooldown.scaleUp is 60s"}]})"));
  EXPECT_NE(whyToText(plan.why.front()).find("(blocked: Unschedulable)"), std::string::npos);
}

// A node backing off after a stall says how its last operation ended (gpuscale.io/outcome), so
// `explain` names the stall: mig-manager failed, stuck, absent.
TEST(WhyNotTest, ANodeBackingOffSaysHowItsLastOperationEnded) {
  struct Case {
    const char* what;
    std::string outcome;  // the annotation ("" = none)
    std::string says;     // in the NodeBackoff detail
  };
  const Case cases[] = {
      {"stuck",
       R"({"plan":"p","kind":"mig","result":"timeout","message":"mig-manager stuck in \"rebooting\""})",
       "failed (timeout: mig-manager stuck in \"rebooting\"); backing off for 300s more"},
      {"failed", R"({"plan":"p","kind":"mig","result":"failed"})", "failed (failed); backing off"},
      {"no outcome", "", "an earlier operation failed; backing off for 300s more"},
      {"an outcome that does not read", "{not json", "an earlier operation failed; backing off"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<json> items = busyA100();
    json node = testing::migNode("a100-idle", kA100, 1, "all-3g.20gb", {{"3g.20gb", 2}});
    node["metadata"]["annotations"]["gpuscale.io/backoff-until"] = "2026-11-22T01:05:00Z";
    if (!c.outcome.empty()) node["metadata"]["annotations"]["gpuscale.io/outcome"] = c.outcome;
    items.push_back(node);
    ClusterSnapshot snapshot = testing::snapshotOf(testing::migCluster(items));
    // What the reconciler's pass does with a node backing off (reconciler/pass.h).
    snapshot.nodes[*snapshot.nodeIndex("a100-idle")].inTransition = true;
    const PolicySet policies =
        testing::policiesFrom("name: default\nhpaNamespaces: [default]\nlevers: [migReshape]\n");
    const Plan plan = planPartitions(snapshot, assessWorkloads(snapshot, policies), kNow);
    ASSERT_EQ(plan.why.size(), 1u);
    std::string detail;
    for (const auto& r : plan.why.front().reasons) {
      if (r.code == WhyCode::kNodeBackoff && r.node == "a100-idle") detail = r.detail;
    }
    EXPECT_NE(detail.find(c.says), std::string::npos) << whyToText(plan.why.front());
  }
}

TEST(WhyNotTest, EveryCodeHasAName) {
  for (int c = 0; c <= static_cast<int>(WhyCode::kDraNoSharing); ++c) {
    EXPECT_NE(whyCodeName(static_cast<WhyCode>(c)), "Unknown") << c;
  }
}

}  // namespace why_not_test
}  // namespace gpuscale::partition
