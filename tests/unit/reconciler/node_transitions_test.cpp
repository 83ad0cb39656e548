// The node operation state machine (node_transitions.h, node_operation.h): every transition of the
// table is taken once against the fake API, from a node in the phase and state it names, and its
// writes (outcome, label, backoff, operands, taint) and Event checked. A transition added to the
// table without a row here fails the coverage check.
#include "gpuscale/reconciler/node_transitions.h"

#include <gtest/gtest.h>

#include <set>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/reconciler/node_operation.h"

namespace gpuscale::reconciler {
namespace node_transitions_test {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kNode = "gpu-node";
constexpr const char* kPaused = "nvidia.com/gpu.deploy.device-plugin";
const TimePoint kT0 = *core::parseRfc3339("2026-11-22T01:00:00Z");

kube::ResourceRef nodes() { return kube::ResourceRef::collection("", "v1", "nodes"); }

// An operation of `kind` in `phase` on kNode, started `age` before the pass.
NodeIntent intentFor(NodeOpKind kind, NodeOpPhase phase, bool then) {
  NodeIntent intent;
  intent.plan = "p1";
  intent.kind = kind;
  intent.phase = phase;
  intent.previous = "all-3g.20gb";
  if (kind == NodeOpKind::kMig) {
    partition::MigPartedConfig file;
    const std::string name = partition::ownedConfigName(kNode, "next geometry");
    file.configs[name] = {partition::MigConfigEntry{}};
    intent.label = name;
    intent.config = partition::emitMigPartedConfig(file);
    intent.expect = {{"nvidia.com/mig-1g.5gb", 14}};
    intent.gpus = {0, 1};
  } else {
    intent.config = "version: v1\nsharing:\n  timeSlicing: {}\n";
    intent.label = partition::ownedConfigName(kNode, intent.config);
    intent.expect = {{"nvidia.com/gpu", 8}};
  }
  if (then) {
    intent.then = TimeSlicingFollowUp{partition::ownedConfigName(kNode, "then"),
                                      "version: v1\n",
                                      {{"nvidia.com/mig-1g.5gb", 28}}};
  }
  intent.started = kT0;
  if (phase == NodeOpPhase::kApplied) intent.applied = kT0;
  return intent;
}

struct Row {
  std::string_view transition;  // the name of the transition this row takes
  NodeOpKind kind;
  NodeOpPhase phase;
  std::string label;  // the config label on the node: "ours", "previous" or another value
  std::string state;  // nvidia.com/mig.config.state
  bool capacity;      // allocatable shows what the intent expects
  std::chrono::seconds age;
  bool then = false;       // the MIG step carries a time-slicing follow-up
  bool podOnNode = false;  // a GPU pod appeared on the node
  bool failPodList = false;
  // Expected after one advance():
  bool inFlight = false;
  std::optional<Outcome> outcome;  // in the outcome annotation; nullopt: none written
  std::string labelAfter;          // "ours", "previous" or the value
  bool backoff = false;
  std::string pausedAfter = "paused-for-mig-change";  // the operand label
  std::string event;                                  // an Event reason recorded
  bool neverTainted = false;                          // no write put the reshape taint on the node
  std::chrono::seconds migConfigPropagation{0};       // ActuatorOptions::migConfigPropagation
};

// The transition named `name` in the table.
const NodeTransition& transitionNamed(std::string_view name) {
  for (const auto& t : nodeTransitions()) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << name << " is not in the table";
  return nodeTransitions().front();
}

// Whether `w` puts the reshape taint on a node.
bool taints(const testing::Write& w) {
  if (!w.body.contains("spec") || !w.body["spec"].contains("taints")) return false;
  for (const auto& t : w.body["spec"]["taints"]) {
    if (t.value("key", "") == k8s::kReshapeTaint) return true;
  }
  return false;
}

TEST(NodeTransitionsTest, EveryTransitionIsTakenWithItsWrites) {
  const auto kMig = NodeOpKind::kMig;
  const auto kTs = NodeOpKind::kTimeSlicing;
  const auto kPrep = NodeOpPhase::kPrepared;
  const auto kAppl = NodeOpPhase::kApplied;
  const auto kNone = NodeOpPhase::kNone;
  // state "-": no nvidia.com/mig.config.state label at all. Nodes of a MIG operation in the
  // applied phase (and of phase none) start with the reshape taint; prepared ones get it from the
  // step.
  const std::vector<Row> rows{
      {"none/any/orphan-taint", kMig, kNone, "ours", "pending", false, 5s, false, false, false,
       false, std::nullopt, "ours", false, "paused-for-mig-change", "ReshapeTaintRemoved"},
      {"prepared/mig/not-mig-managed", kMig, kPrep, "previous", "-", false, 5s, false, false, false,
       false, Outcome::kAborted, "previous", true, "paused-for-mig-change", "MigReconfigureAborted",
       true},
      {"prepared/mig/not-mig-managed", kMig, kPrep, "previous", "", false, 301s, false, false,
       false, false, Outcome::kAborted, "previous", true, "paused-for-mig-change",
       "MigReconfigureAborted", true},
      {"prepared/mig/prepare-timed-out", kMig, kPrep, "previous", "success", false, 301s, false,
       false, false, false, Outcome::kFailed, "previous", true, "true", "MigReconfigureFailed"},
      {"prepared/sharing/prepare-timed-out", kTs, kPrep, "previous", "success", false, 301s, false,
       false, false, false, Outcome::kFailed, "previous", true, "paused-for-mig-change",
       "TimeSlicingFailed"},
      {"prepared/mig/pod-in-the-way", kMig, kPrep, "previous", "success", false, 5s, false, true,
       false, false, Outcome::kAborted, "previous", false, "true", "MigReconfigureAborted"},
      {"prepared/any/step-failed", kMig, kPrep, "previous", "success", false, 5s, false, false,
       true, true, std::nullopt, "previous", false, "paused-for-mig-change", ""},
      {"prepared/mig/config-propagating", kMig, kPrep, "previous", "success", false, 5s, false,
       false, false, true, std::nullopt, "previous", false, "paused-for-mig-change", "", true, 90s},
      {"prepared/any/prepared", kTs, kPrep, "previous", "success", false, 5s, false, false, false,
       true, std::nullopt, "ours", false, "paused-for-mig-change", "TimeSlicingStarted"},
      {"applied/mig/label-changed-by-other", kMig, kAppl, "all-balanced", "success", false, 5s,
       false, false, false, false, Outcome::kSuperseded, "all-balanced", false, "true",
       "MigReconfigureFailed"},
      {"applied/sharing/label-changed-by-other", kTs, kAppl, "someone-else", "success", false, 5s,
       false, false, false, false, Outcome::kSuperseded, "someone-else", false,
       "paused-for-mig-change", "TimeSlicingFailed"},
      {"applied/mig/operator-failed", kMig, kAppl, "ours", "failed", false, 5s, false, false, false,
       false, Outcome::kFailed, "previous", true, "true", "MigReconfigureFailed"},
      {"applied/mig/capacity-ready", kMig, kAppl, "ours", "success", true, 5s, false, false, false,
       false, Outcome::kSucceeded, "ours", false, "paused-for-mig-change",
       "MigReconfigureSucceeded"},
      {"applied/mig/capacity-ready-then-sharing", kMig, kAppl, "ours", "success", true, 5s, true,
       false, false, true, std::nullopt, "ours", false, "paused-for-mig-change",
       "TimeSlicingPlanned"},
      {"applied/mig/stuck", kMig, kAppl, "ours", "pending", false, 601s, false, false, false, false,
       Outcome::kTimedOut, "previous", true, "paused-for-mig-change", "MigReconfigureTimedOut"},
      {"applied/mig/stuck", kMig, kAppl, "ours", "rebooting", false, 601s, false, false, false,
       false, Outcome::kTimedOut, "previous", true, "paused-for-mig-change",
       "MigReconfigureTimedOut"},
      {"applied/mig/timed-out", kMig, kAppl, "ours", "-", false, 601s, false, false, false, false,
       Outcome::kTimedOut, "previous", true, "true", "MigReconfigureTimedOut"},
      {"applied/mig/no-capacity", kMig, kAppl, "ours", "success", false, 601s, false, false, false,
       false, Outcome::kTimedOut, "ours", true, "true", "MigReconfigureTimedOut"},
      {"applied/sharing/capacity-ready", kTs, kAppl, "ours", "success", true, 5s, false, false,
       false, false, Outcome::kSucceeded, "ours", false, "paused-for-mig-change",
       "TimeSlicingSucceeded"},
      {"applied/sharing/timed-out", kTs, kAppl, "ours", "success", false, 301s, false, false, false,
       false, Outcome::kTimedOut, "previous", true, "paused-for-mig-change", "TimeSlicingTimedOut"},
      {"applied/any/waiting", kMig, kAppl, "ours", "pending", false, 10s, false, false, false, true,
       std::nullopt, "ours", false, "paused-for-mig-change", ""},
  };
  std::set<std::string_view> taken;
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.transition));
    auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
    auto client = std::make_shared<testing::RecordingClient>(fake);
    auto events = std::make_shared<MemoryEventRecorder>();
    const NodeIntent intent = intentFor(row.kind, row.phase, row.then);
    auto labelValue = [&](const std::string& which) {
      return which == "ours" ? intent.label : which == "previous" ? intent.previous : which;
    };
    json allocatable = json::object();
    for (const auto& [resource, n] : intent.expect) {
      allocatable[resource] = std::to_string(row.capacity ? n : 0);
    }
    const json taint{{"key", std::string(k8s::kReshapeTaint)}, {"effect", "NoSchedule"}};
    const bool tainted = row.kind == NodeOpKind::kMig && row.phase != NodeOpPhase::kPrepared;
    json node{{"metadata",
               {{"name", kNode},
                {"labels",
                 {{std::string(intent.labelKey()), labelValue(row.label)},
                  {kPaused, "paused-for-mig-change"}}},
                {"annotations", json::object()}}},
              {"spec", {{"taints", tainted ? json::array({taint}) : json::array()}}},
              {"status", {{"allocatable", allocatable}}}};
    if (row.state != "-") node["metadata"]["labels"][k8s::kMigConfigStateLabel] = row.state;
    if (row.phase != NodeOpPhase::kNone) {
      node["metadata"]["annotations"][k8s::kIntentAnnotation] = encodeNodeIntent(intent);
    }
    ASSERT_TRUE(fake->create(nodes(), node).ok());
    if (row.podOnNode) {
      auto pod = partition::testing::gpuPod("default", "late", 0, "nvidia.com/mig-3g.20gb", kNode);
      ASSERT_TRUE(
          fake->create(kube::ResourceRef::collection("", "v1", "pods", "default"), pod).ok());
    }
    if (row.failPodList) fake->failNext("list", core::Status(500, "InternalError", "boom"));

    ActuatorOptions options;
    options.migConfigPropagation = row.migConfigPropagation;
    NodeOperations operations(client, events, std::make_shared<NodeLevelGpuPodMapping>(), options);
    ActuationReport report;
    EXPECT_EQ(operations.advance(kNode, kT0 + row.age, report), row.inFlight);

    const json after = *fake->get(nodes().named(kNode));
    auto outcome = decodeNodeOutcome(k8s::annotationOf(after, k8s::kOutcomeAnnotation));
    EXPECT_EQ(outcome ? std::optional<Outcome>(outcome->result) : std::nullopt, row.outcome);
    EXPECT_EQ(k8s::labelOf(after, intent.labelKey()), labelValue(row.labelAfter));
    EXPECT_EQ(!k8s::annotationOf(after, k8s::kBackoffAnnotation).empty(), row.backoff);
    EXPECT_EQ(k8s::labelOf(after, kPaused), row.pausedAfter);
    EXPECT_EQ(k8s::annotationOf(after, k8s::kIntentAnnotation).empty(), !row.inFlight);
    if (!row.inFlight) {
      EXPECT_EQ(after["spec"].value("taints", json::array()), json::array())
          << "no reshape taint stays without an operation in flight";
    }
    if (row.neverTainted) {
      EXPECT_EQ(client->countWhere(taints), 0);
    }
    const NodeTransition& t = transitionNamed(row.transition);
    EXPECT_EQ(report.stalls, t.stall.empty() ? std::vector<std::string>{}
                                             : std::vector<std::string>{std::string(t.stall)});
    if (!row.event.empty()) {
      EXPECT_EQ(events->withReason(row.event).size(), 1u);
    } else {
      EXPECT_TRUE(events->events().empty());
    }
    taken.insert(row.transition);
  }
  for (const auto& t : nodeTransitions()) {
    EXPECT_TRUE(taken.contains(t.name)) << t.name << " is taken by no row";
  }
}

// A reshape taint is an orphan unless a live intent owns it: an intent the reconciler could not
// have written (another node's configs) leaves the taint to be removed, a live one keeps it.
TEST(NodeTransitionsTest, OnlyALiveIntentKeepsTheReshapeTaint) {
  struct Case {
    const char* what;
    std::string intent;  // the annotation's value ("" = none)
    bool taintAfter;
  };
  NodeIntent live = intentFor(NodeOpKind::kMig, NodeOpPhase::kApplied, false);
  NodeIntent foreign = live;
  foreign.label = partition::ownedConfigName("another-node", "geometry");
  const Case cases[] = {
      {"no intent", "", false},
      {"an intent naming another node's config", encodeNodeIntent(foreign), false},
      {"an annotation that does not decode", "{not json", false},
      {"a live intent", encodeNodeIntent(live), true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
    auto events = std::make_shared<MemoryEventRecorder>();
    json node{{"metadata",
               {{"name", kNode},
                {"labels", {{std::string(k8s::kMigConfigStateLabel), "pending"}}},
                {"annotations", json::object()}}},
              {"spec",
               {{"taints",
                 {{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}},
                  {{"key", std::string(k8s::kReshapeTaint)}, {"effect", "NoSchedule"}}}}}}};
    if (!c.intent.empty()) node["metadata"]["annotations"][k8s::kIntentAnnotation] = c.intent;
    ASSERT_TRUE(fake->create(nodes(), node).ok());
    NodeOperations operations(fake, events, std::make_shared<NodeLevelGpuPodMapping>(), {});
    ActuationReport report;
    EXPECT_EQ(operations.removeOrphanTaint(kNode, report), !c.taintAfter);
    const json after = *fake->get(nodes().named(kNode));
    const json taints = after["spec"].value("taints", json::array());
    EXPECT_EQ(taints.size(), c.taintAfter ? 2u : 1u) << taints.dump();
    EXPECT_EQ(taints[0].value("key", ""), "dedicated") << "other taints stay";
    EXPECT_EQ(k8s::annotationOf(after, k8s::kIntentAnnotation), c.intent)
        << "the annotation is not the reconciler's to remove";
    EXPECT_EQ(events->withReason("ReshapeTaintRemoved").size(), c.taintAfter ? 0u : 1u);
    EXPECT_EQ(report.stalls.size(), c.taintAfter ? 0u : 1u);
  }
}

TEST(NodeTransitionsTest, EachObservationHasOneTransitionPerPhaseAndKind) {
  for (const auto& t : nodeTransitions()) {
    for (NodeOpKind kind : {NodeOpKind::kMig, NodeOpKind::kTimeSlicing, NodeOpKind::kMps}) {
      const bool covers =
          t.kinds == NodeKinds::kAny || (t.kinds == NodeKinds::kMig) == (kind == NodeOpKind::kMig);
      if (covers) {
        EXPECT_EQ(findTransition(t.phase, kind, t.event), &t) << t.name;
      }
    }
  }
}

}  // namespace node_transitions_test
}  // namespace gpuscale::reconciler
