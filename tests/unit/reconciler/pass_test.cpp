// One pass for the controller, `plan --from` and `explain`: on one dump the three plan the same
// actions and give the same reasons, including for a node whose operation is in flight (the
// controller holds it, so the offline plan must too).
#include "gpuscale/reconciler/pass.h"

#include <gtest/gtest.h>

#include <thread>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/capacity_request.h"
#include "gpuscale/reconciler/controller.h"
#include "gpuscale/reconciler/hpa_explain.h"
#include "gpuscale/reconciler/intent.h"

namespace gpuscale::reconciler {
namespace pass_test {

using nlohmann::json;

const TimePoint kNow = *core::parseRfc3339("2026-11-22T01:00:00Z");
const std::string kState = StateStoreOptions{}.name;

// The seed dump with an idle node to reshape (a100-node-3) and a time-sliced one (a100-node-1);
// `inFlight` names a node that carries a gpuscale operation's intent.
json seedDump(const std::string& inFlight) {
  json dump = partition::testing::loadDump("a100_idle_reshape.json");
  if (inFlight.empty()) return dump;
  NodeIntent intent;
  intent.plan = "earlier";
  intent.kind = NodeOpKind::kTimeSlicing;
  intent.label = "gpuscale-" + inFlight + "-00000000_00000000";
  intent.started = kNow - std::chrono::seconds(20);
  for (auto& item : dump["items"]) {
    if (item["kind"] == "Node" && item["metadata"]["name"] == inFlight) {
      item["metadata"]["annotations"][std::string(k8s::kIntentAnnotation)] =
          encodeNodeIntent(intent);
    }
  }
  return dump;
}

// A controller over `fake` that only plans (a dry run: nothing is written).
std::unique_ptr<Controller> dryRunController(
    const std::shared_ptr<gpuscale::testing::FakeKubeClient>& fake) {
  auto events = std::make_shared<MemoryEventRecorder>();
  auto actuator = std::make_shared<KubeActuator>(
      fake, events, std::make_shared<NodeLevelGpuPodMapping>(), ActuatorOptions{});
  ControllerOptions options;
  options.dryRun = true;
  return std::make_unique<Controller>(
      fake, actuator, testing::seedPolicies(), events,
      std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>()), options);
}

// What the controller plans for `dump` (a dry run: nothing is written).
partition::Plan controllerPlan(const json& dump) {
  auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
  testing::seed(*fake, dump);
  auto controller = dryRunController(fake);
  Controller& c = *controller;
  auto r = c.pass(testing::objectsOf(*fake), kNow);
  EXPECT_TRUE(r.error.empty()) << r.error;
  return r.plan;
}

// `plan --from` runs this: on `dump` it must plan what the controller planned (`live`).
void expectOfflinePlanIs(const json& dump, const partition::PolicySet& policies,
                         const partition::Plan& live) {
  PassInputs in;
  in.policies = &policies;
  in.now = kNow;
  auto offline = runPassOnDump(dump, in, kState);
  ASSERT_TRUE(offline.ok()) << offline.status().toString();
  EXPECT_EQ(partition::planToJson(offline->plan).dump(2), partition::planToJson(live).dump(2));
}

// What the controller plans for `dump` from its informers' caches (Pods read once into typed
// records, pod_cache.h), as it runs live; a dry run, never leader, so only this pass runs.
partition::Plan controllerPlanFromCaches(const json& dump) {
  auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
  // The GPUCapacityRequest CRD is installed: discovery names it, so its informer runs.
  fake->setPath("/apis/gpuscale.io/v1alpha1",
                {{"resources", json::array({{{"name", "gpucapacityrequests"}}})}});
  testing::seed(*fake, dump);
  auto controller = dryRunController(fake);
  Controller& c = *controller;
  c.start([] { return false; });
  for (int i = 0; i < 1000 && !c.synced(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(c.synced());
  auto r = c.passFromCaches(kNow);
  c.stop();
  EXPECT_TRUE(r.error.empty()) << r.error;
  return r.plan;
}

TEST(PassTest, TheControllerPlanAndExplainAgreeOnOneDump) {
  struct Row {
    const char* what;
    std::string inFlight;  // node with an operation in flight, "" for none
    std::vector<std::string> nodesChanged;
    std::string reasonOnHeldNode;  // "<node>/<code>" the explanation must name, "" for none
  };
  const std::vector<Row> rows{
      {"nothing in flight: both nodes change", "", {"a100-node-1", "a100-node-3"}, ""},
      {"the idle node's reshape is in flight: only time-slicing",
       "a100-node-3",
       {"a100-node-1"},
       "a100-node-3/NodeOperationInFlight"},
  };
  auto policies =
      partition::parsePolicies("policies:\n- name: default\n  hpaNamespaces: [default]\n");
  ASSERT_TRUE(policies.ok());
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    const json dump = seedDump(row.inFlight);
    const partition::Plan live = controllerPlan(dump);
    EXPECT_EQ(partition::planToJson(controllerPlanFromCaches(dump)).dump(2),
              partition::planToJson(live).dump(2));
    expectOfflinePlanIs(dump, *policies, live);
    std::vector<std::string> changed;
    for (const auto& a : live.actions) {
      if (const auto* t = std::get_if<partition::TimeSlicingChange>(&a)) changed.push_back(t->node);
      if (const auto* m = std::get_if<partition::MigReconfigure>(&a)) changed.push_back(m->node);
    }
    std::sort(changed.begin(), changed.end());
    EXPECT_EQ(changed, row.nodesChanged);

    // `explain` runs this: the same plan's reasons and actions for the HPA.
    auto explained = explainHpas(dump, kState, *policies, {"default", "triton", kNow, nullptr});
    ASSERT_TRUE(explained.ok()) << explained.status().toString();
    ASSERT_EQ(explained->hpas.size(), 1u);
    const HpaExplanation& e = explained->hpas.front();
    ASSERT_TRUE(e.why.has_value()) << e.outside;
    EXPECT_EQ(e.actions.size(), live.actions.size()) << explanationsText(*explained);
    for (std::size_t i = 0; i < std::min(e.actions.size(), live.actions.size()); ++i) {
      EXPECT_EQ(partition::actionToJson(e.actions[i]), partition::actionToJson(live.actions[i]));
    }
    const auto codes = partition::testing::whyCodes(*e.why);
    if (!row.reasonOnHeldNode.empty()) {
      EXPECT_NE(std::find(codes.begin(), codes.end(), row.reasonOnHeldNode), codes.end())
          << explanationsText(*explained);
    }
  }
}

// A capacity request in the dump is a demand beside the HPA: the controller, `plan --from` and
// `explain` plan and explain it alike.
TEST(PassTest, ACapacityRequestIsPlannedAlikeByTheControllerPlanAndExplain) {
  json dump = seedDump("");
  dump["items"].push_back(
      {{"apiVersion", "gpuscale.io/v1alpha1"},
       {"kind", "GPUCapacityRequest"},
       {"metadata",
        {{"name", "planner"},
         {"namespace", "default"},
         {"uid", "uid-planner"},
         {"annotations", {{"gpuscale.io/partition-policy", "default"}}}}},
       {"spec", {{"resource", "nvidia.com/mig-1g.5gb"}, {"replicas", 3}, {"priority", 0}}}});
  auto policies =
      partition::parsePolicies("policies:\n- name: default\n  hpaNamespaces: [default]\n");
  ASSERT_TRUE(policies.ok());
  // The request reaches the pass through the controller's watch on the kind.
  const partition::Plan live = controllerPlanFromCaches(dump);
  EXPECT_EQ(partition::planToJson(controllerPlan(dump)).dump(2),
            partition::planToJson(live).dump(2));
  expectOfflinePlanIs(dump, *policies, live);
  const std::string name = partition::capacityRequestHpaName("planner");
  const auto demand = std::find_if(live.demands.begin(), live.demands.end(),
                                   [&](const auto& d) { return d.name == name; });
  ASSERT_NE(demand, live.demands.end()) << partition::planToText(live);
  EXPECT_EQ(demand->reason, partition::BlockReason::kRequested);
  EXPECT_EQ(demand->wanted, 3);

  auto explained = explainHpas(dump, kState, *policies, {"default", name, kNow, nullptr});
  ASSERT_TRUE(explained.ok()) << explained.status().toString();
  ASSERT_EQ(explained->hpas.size(), 1u);
  const HpaExplanation& e = explained->hpas.front();
  ASSERT_TRUE(e.why.has_value()) << e.outside;
  EXPECT_EQ(e.why->wanted, 3);
  EXPECT_NE(
      explanationsText(*explained).find("GPUCapacityRequest default/planner (policy default)"),
      std::string::npos)
      << explanationsText(*explained);
  EXPECT_NE(explanationsText(*explained)
                .find("request status: granted 0 of 3 replicas; no Granted condition yet"),
            std::string::npos)
      << explanationsText(*explained);
}

}  // namespace pass_test
}  // namespace gpuscale::reconciler
