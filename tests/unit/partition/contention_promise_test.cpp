// Contention across planning passes: capacity promised to an HPA whose change is in flight (or
// whose raise its pods have not filled) is reserved for it, and re-divided only for a higher
// priority, never below the pods that exist (contention.h divideGroup, planner.h).
#include <gtest/gtest.h>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/contention.h"
#include "gpuscale/partition/planner.h"
#include "kube_objects.h"
#include "planned.h"

namespace gpuscale::partition {
namespace contention_promise_test {

using testing::json;

struct DivideRow {
  const char* what;
  std::vector<GroupMember> members;
  int freePods;
  // Per member: the maxReplicas a grown member may get (-1: unchanged), the promise it keeps
  // (-1: not cut), and whether the group ran short (a why).
  std::vector<int> maxReplicas;
  std::vector<int> cutTo;
  bool short_;
};

GroupMember grown(const char* name, int priority, int held, int need, int ceilingAfter) {
  GroupMember m{name, priority, held, need};
  m.ceilingAfter = ceilingAfter;
  return m;
}

GroupMember promised(const char* name, int priority, int held, int need, int promisedMax,
                     int floor) {
  GroupMember m{name, priority, held, need};
  m.promise = true;
  m.promisedMax = promisedMax;
  m.floor = floor;
  return m;
}

// A member whose replica is a group of `size` pods (its counts in groups, freePods in pods).
GroupMember inGroups(GroupMember m, int size) {
  m.podsPerReplica = size;
  return m;
}

class DivideTable : public ::testing::TestWithParam<DivideRow> {};

TEST_P(DivideTable, ReservesPromisesAndReDividesThemOnlyForAHigherPriority) {
  const DivideRow& r = GetParam();
  const auto shares = divideGroup(r.members, r.freePods);
  ASSERT_EQ(shares.size(), r.members.size()) << r.what;
  for (std::size_t k = 0; k < shares.size(); ++k) {
    EXPECT_EQ(shares[k].maxReplicas.value_or(-1), r.maxReplicas[k]) << r.what << " (" << k << ")";
    EXPECT_EQ(shares[k].cutTo.value_or(-1), r.cutTo[k]) << r.what << " (" << k << ")";
    EXPECT_EQ(!shares[k].why.empty(), r.short_) << r.what << " (" << k << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, DivideTable,
    ::testing::Values(DivideRow{"no promise, enough: each keeps what it grew",
                                {grown("a", 0, 2, 3, 9), grown("b", 0, 1, 2, 9)},
                                7,
                                {-1, -1},
                                {-1, -1},
                                false},
                      DivideRow{"a later-blocked HPA sees only what the promise leaves",
                                {promised("first", 0, 5, 3, 8, 7), grown("second", 0, 2, 2, 9)},
                                7,
                                {-1, 6},
                                {-1, -1},
                                false},
                      DivideRow{
                          "the promise to a higher priority takes all: no raise for the lower",
                          {promised("high", 1000, 5, 7, 12, 7), grown("low", 0, 2, 8, 9)},
                          7,
                          {-1, 2},
                          {-1, -1},
                          true},
                      DivideRow{"a higher priority arriving later re-divides the promise",
                                {grown("high", 1000, 2, 8, 9), promised("low", 0, 5, 7, 12, 5)},
                                7,
                                {9, -1},
                                {-1, 5},
                                true},
                      DivideRow{"a cut never goes below the floor (the pods that exist)",
                                {grown("high", 1000, 2, 8, 9), promised("low", 0, 5, 7, 12, 10)},
                                7,
                                {9, -1},
                                {-1, 10},
                                true},
                      DivideRow{"capacity that pods took meanwhile cuts no promise",
                                {promised("high", 1000, 5, 7, 12, 7), grown("low", 0, 6, 4, 9)},
                                3,
                                {-1, 6},
                                {-1, -1},
                                true},
                      DivideRow{"a cut takes no more than the higher priority was granted",
                                {grown("high", 1000, 2, 2, 9), promised("low", 0, 5, 7, 12, 5)},
                                3,
                                {4, -1},
                                {-1, 10},
                                true},
                      DivideRow{"a promise already at its floor is kept",
                                {grown("high", 1000, 2, 8, 9), promised("low", 0, 5, 7, 12, 12)},
                                7,
                                {9, -1},
                                {-1, -1},
                                true},
                      DivideRow{"equal priorities: the promise made earlier stands",
                                {promised("first", 0, 5, 6, 11, 7), grown("second", 0, 2, 6, 9)},
                                6,
                                {-1, 2},
                                {-1, -1},
                                true},
                      DivideRow{"equal priorities: what the promise leaves is shared",
                                {promised("first", 0, 5, 3, 8, 7), grown("second", 0, 2, 6, 9),
                                 grown("third", 0, 1, 6, 9)},
                                7,
                                {-1, 4, 3},
                                {-1, -1, -1},
                                true},
                      DivideRow{"a grown member never gets more than its partitions hold",
                                {promised("first", 0, 5, 1, 6, 5), grown("second", 0, 2, 1, 3)},
                                7,
                                {-1, 3},
                                {-1, -1},
                                false}));

// Groups of 2 pods each needing its partition (a LeaderWorkerSet's): the needs count pods, the
// shares whole groups.
INSTANTIATE_TEST_SUITE_P(
    Groups, DivideTable,
    ::testing::Values(
        DivideRow{"2 more groups each are 8 pods, 5 free: one more group each, a pod idle",
                  {inGroups(grown("a", 0, 1, 2, 9), 2), inGroups(grown("b", 0, 1, 2, 9), 2)},
                  5,
                  {2, 2},
                  {-1, -1},
                  true},
        DivideRow{"8 pods free: each keeps what it grew",
                  {inGroups(grown("a", 0, 1, 2, 9), 2), inGroups(grown("b", 0, 1, 2, 9), 2)},
                  8,
                  {-1, -1},
                  {-1, -1},
                  false},
        DivideRow{"a grown member gets the whole groups a promise leaves",
                  {promised("first", 0, 5, 2, 7, 5), inGroups(grown("second", 0, 1, 3, 9), 2)},
                  7,
                  {-1, 3},
                  {-1, -1},
                  true},
        DivideRow{"a promise is cut by whole groups, rounded up",
                  {grown("high", 10, 0, 3, 5), inGroups(promised("low", 0, 1, 2, 3, 1), 2)},
                  5,
                  {3, -1},
                  {-1, 2},
                  true}));

// The two-services pool: gpu-0 at all-1g.5gb (7 slices: `first` runs 5, `second` 2), gpu-1 idle
// at 3g.20gb x2 (no 1g.5gb slice until reshaped, then 7). Both HPAs ask nvidia.com/mig-1g.5gb.
constexpr const char* kSlice = "nvidia.com/mig-1g.5gb";
const TimePoint kNow = *core::parseRfc3339("2026-11-26T09:00:00Z");

// An HPA `name` at maxReplicas `max` with `running` pods on gpu-0 and `pending` unschedulable
// ones, whose metric asks for `wanted` replicas of its `running` ready pods.
void app(std::vector<json>& items, const std::string& name, int running, int pending, int max,
         int wanted) {
  items.push_back(testing::deployment("default", name, running + pending, kSlice));
  for (int i = 0; i < running; ++i)
    items.push_back(testing::gpuPod("default", name, i, kSlice, "gpu-0"));
  for (int i = 0; i < pending; ++i)
    items.push_back(testing::gpuPod("default", name, running + i, kSlice, ""));
  auto spec = testing::hpaSpec(1, max, running + pending, running + pending,
                               std::to_string(50 * wanted / running), "50", pending == 0);
  spec.policy = name;
  items.push_back(testing::hpa("default", name, spec));
}

// `firstInFlight`: the plan that reshapes gpu-1 for `first` (maxReplicas 7 -> 12) is in flight:
// gpu-1 carries its intent (expecting 7 slices) and `first` its promise. Otherwise gpu-1 has been
// reshaped already (7 free slices) and nothing is in flight.
std::unique_ptr<testing::Planned> pass(int firstPriority, int secondPriority, bool firstInFlight,
                                       int secondPending) {
  std::vector<json> items{
      testing::defaultMigConfigMap(),
      testing::migNode("gpu-0", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}})};
  if (firstInFlight) {
    items.push_back(
        testing::migNode("gpu-1", "NVIDIA-A100-SXM4-40GB", 1, "all-3g.20gb", {{"3g.20gb", 2}}));
    items.back()["metadata"]["annotations"] = {
        {"gpuscale.io/intent",
         json{{"plan", "p1"}, {"kind", "mig"}, {"expect", {{kSlice, 7}}}}.dump()}};
  } else {
    items.push_back(
        testing::migNode("gpu-1", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}}));
  }
  app(items, "first", 5, 2, 7, 12);
  app(items, "second", 2, secondPending, 7, 10);
  auto policy = [](const std::string& name, int priority) {
    return "- {name: " + name + ", hpas: [default/" + name +
           "], levers: [migReshape], migProfiles: [1g.5gb], maxReplicas: {factor: 4}, priority: " +
           std::to_string(priority) + "}\n";
  };
  return testing::planned(testing::list(items),
                          testing::policiesFrom("policies:\n" + policy("first", firstPriority) +
                                                policy("second", secondPriority)),
                          kNow, [&](ClusterSnapshot& snapshot) {
                            if (!firstInFlight) return;
                            // As the reconciler's pass: the state store's intent, and the node held
                            // while it runs.
                            for (auto& h : snapshot.hpas) {
                              if (h.name == "first") h.promisedMaxReplicas = 12;
                            }
                            for (auto& n : snapshot.nodes)
                              n.inTransition = n.inTransition || n.hasIntent;
                          });
}

std::string explainOf(const Plan& plan, const std::string& name) {
  for (const auto& d : plan.demands) {
    if (d.name == name) return d.explain;
  }
  return "";
}

struct PassRow {
  const char* what;
  int firstPriority, secondPriority;
  bool firstInFlight;
  int secondPending;
  const char* maxChanges;  // JSON: HPA -> new maxReplicas
  int cutTo;               // first's promise after the plan (-1: not cut)
};

class PassTable : public ::testing::TestWithParam<PassRow> {};

TEST_P(PassTable, APromiseIsReservedAcrossPasses) {
  const PassRow& r = GetParam();
  auto p = pass(r.firstPriority, r.secondPriority, r.firstInFlight, r.secondPending);
  const std::string plan = planToJson(p->plan).dump(2);
  EXPECT_EQ(testing::maxChangesOf(p->plan), json::parse(r.maxChanges)) << r.what << "\n" << plan;
  if (r.cutTo < 0) {
    EXPECT_TRUE(p->plan.promiseCuts.empty()) << r.what << "\n" << plan;
  } else {
    ASSERT_EQ(p->plan.promiseCuts.size(), 1u) << r.what << "\n" << plan;
    EXPECT_EQ(p->plan.promiseCuts[0].name, "first");
    EXPECT_EQ(p->plan.promiseCuts[0].from, 12);
    EXPECT_EQ(p->plan.promiseCuts[0].to, r.cutTo) << r.what;
  }
  EXPECT_NE(explainOf(p->plan, "second").find("shared: priority"), std::string::npos)
      << r.what << "\n"
      << plan;
  for (const auto& a : p->plan.actions) {
    EXPECT_FALSE(std::holds_alternative<MigReconfigure>(a))
        << r.what << ": gpu-1 is reshaped or in flight, gpu-0 holds pods";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, PassTable,
    ::testing::Values(
        // The measured gap: `second` was planned alone and got maxReplicas 7 -> 9 from the
        // slices promised to `first`.
        PassRow{"in flight for the higher priority: the lower gets no headroom", 1000, 0, true, 5,
                "{}", -1},
        PassRow{"in flight for the lower priority: the higher re-divides the promise", 0, 1000,
                true, 5, "{}", 7},
        PassRow{"after the change: both blocked, the higher gets the new slices", 1000, 0, false, 5,
                R"({"first": 12})", -1},
        PassRow{"after the change, priorities swapped", 0, 1000, false, 5, R"({"second": 9})",
                -1}));

TEST(ContentionPromiseTest, AChangeInFlightIsNeitherGrownNorShrunk) {
  auto p = pass(1000, 0, true, 0);
  for (const auto& a : p->plan.actions) {
    if (const auto* m = std::get_if<SetMaxReplicas>(&a)) {
      EXPECT_NE(m->name, "first");
    }
  }
  EXPECT_TRUE(p->plan.promiseCuts.empty());
}

TEST(ContentionPromiseTest, TheIntentsExpectedAllocatableIsInTheSnapshot) {
  auto p = pass(0, 0, true, 5);
  const NodeState* n = p->snapshot.node("gpu-1");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->expected, (ResourceCounts{{kSlice, 7}}));
  EXPECT_TRUE(p->snapshot.node("gpu-0")->expected.empty());
}

TEST(ContentionPromiseTest, DemandCountsHeldAndPromisedPods) {
  auto p = pass(1000, 0, true, 5);
  for (const auto& w : p->workloads) {
    if (w.name == "first") {
      EXPECT_TRUE(w.inFlight);
      EXPECT_EQ(w.heldPods, 5);
      EXPECT_EQ(w.promisedPods, 7) << "min(wanted 12, promised 12) - 5 held";
    } else {
      EXPECT_FALSE(w.inFlight);
      EXPECT_EQ(w.heldPods, 2);
      EXPECT_EQ(w.promisedPods, 0) << "never raised";
    }
  }
}

}  // namespace contention_promise_test
}  // namespace gpuscale::partition
