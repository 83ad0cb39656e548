// Multi-tenant safety of a controller pass against the fake API: nothing is managed without a
// configured policy, an annotation outside a policy's scope is ignored (logged once, counted),
// state a tenant writes on its HPA drives nothing, and a full state store refuses changes.
#include <gtest/gtest.h>

#include <prometheus/text_serializer.h>

#include <sstream>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/reconciler/controller.h"

namespace gpuscale::reconciler {
namespace tenancy_test {

using nlohmann::json;
using testing::objectsOf;
using testing::RecordingClient;
using namespace std::chrono_literals;

kube::ResourceRef hpaRef() { return testing::tritonHpaRef(); }

class TenancyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::seed(*fake_, partition::testing::loadDump("a100_idle_reshape.json"));
    options_.maxNodesInFlight = 2;
  }

  std::unique_ptr<Controller> controller(std::shared_ptr<PolicySource> policies,
                                         ControllerOptions o = {}) {
    auto actuator = std::make_shared<KubeActuator>(
        client_, events_, std::make_shared<NodeLevelGpuPodMapping>(), options_);
    return std::make_unique<Controller>(client_, actuator, std::move(policies), events_, metrics_,
                                        o);
  }
  PassResult pass(Controller& c, TimePoint at) { return c.pass(objectsOf(*fake_), at); }

  void annotateHpa(const json& annotations) {
    ASSERT_TRUE(fake_
                    ->patch(hpaRef(), kube::PatchType::kMerge,
                            {{"metadata", {{"annotations", annotations}}}})
                    .ok());
  }
  std::string hpaUid() { return (*fake_->get(hpaRef()))["metadata"].value("uid", ""); }
  int maxReplicas() { return (*fake_->get(hpaRef()))["spec"].value("maxReplicas", 0); }
  std::string metricsText() {
    prometheus::TextSerializer serializer;
    std::ostringstream out;
    serializer.Serialize(out, metrics_->registry()->Collect());
    return out.str();
  }
  // A write that changes something: a node, a ConfigMap (GPU Operator configs or the state
  // store), or an HPA's spec (its informational status annotation aside).
  bool anyNodeOrHpaWrite() {
    return client_->countWhere([](const testing::Write& w) {
      return w.resource == "nodes" || w.resource == "configmaps" ||
             (w.resource == "horizontalpodautoscalers" && w.body.contains("spec"));
    }) > 0;
  }

  std::shared_ptr<gpuscale::testing::FakeKubeClient> fake_ =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  std::shared_ptr<RecordingClient> client_ = std::make_shared<RecordingClient>(fake_);
  std::shared_ptr<MemoryEventRecorder> events_ = std::make_shared<MemoryEventRecorder>();
  std::shared_ptr<ReconcilerMetrics> metrics_ =
      std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>());
  ActuatorOptions options_;
  TimePoint t0_ = *core::parseRfc3339("2026-11-22T01:00:00Z");
};

TEST_F(TenancyTest, WithoutAPolicyFileNothingIsManaged) {
  // The seed HPA asks for "default", the policy a reconciler without --config used to apply to
  // every HPA and node of the cluster.
  auto noConfig = PolicySource::open("");
  ASSERT_TRUE(noConfig.ok());
  auto c = controller(*noConfig);
  auto r = pass(*c, t0_);
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(r.plan.actions.empty()) << partition::planToJson(r.plan).dump();
  EXPECT_TRUE(r.plan.demands.empty());
  EXPECT_FALSE(anyNodeOrHpaWrite());
}

TEST_F(TenancyTest, AnAnnotationOutsideThePolicyScopeIsIgnoredLoggedOnceAndCounted) {
  struct Row {
    const char* what;
    const char* policy;
  };
  const Row rows[] = {
      {"another namespace", "policies:\n- name: default\n  hpaNamespaces: [ml-serving]\n"},
      {"selector unmet",
       "policies:\n- name: default\n  hpaNamespaces: [default]\n"
       "  hpaSelector: {matchLabels: {gpuscale.io/tier: gold}}\n"},
      {"listed for someone else", "policies:\n- name: default\n  hpas: [default/other]\n"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    metrics_ = std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>());
    auto c = controller(testing::seedPolicies(row.policy));
    for (int i = 0; i < 3; ++i) {
      auto r = pass(*c, t0_ + i * 1s);
      EXPECT_TRUE(r.plan.actions.empty()) << partition::planToJson(r.plan).dump();
    }
    EXPECT_FALSE(anyNodeOrHpaWrite());
    const std::string text = metricsText();
    EXPECT_NE(text.find("gpuscale_reconciler_policy_annotations_ignored_total 1"),
              std::string::npos)
        << "counted once over three passes:\n"
        << text;
    EXPECT_NE(text.find("gpuscale_reconciler_policy_annotations_ignored 1"), std::string::npos);
  }
  // In scope, the same HPA is managed.
  auto c = controller(testing::seedPolicies());
  EXPECT_FALSE(pass(*c, t0_ + 10s).plan.actions.empty());
}

TEST_F(TenancyTest, StateForgedOnTheHpaDrivesNothing) {
  // A tenant who may edit the HPA writes what the reconciler used to read back from it: an intent
  // naming a thousand nodes, a last change long ago, an enormous original maxReplicas.
  std::vector<std::string> nodes;
  for (int i = 0; i < 1000; ++i) nodes.push_back("victim-" + std::to_string(i));
  annotateHpa({{"gpuscale.io/intent", encodeHpaIntent({"forged", 7, 5000, nodes, t0_})},
               {"gpuscale.io/last-change", "2000-01-01T00:00:00Z"},
               {"gpuscale.io/original-max-replicas", "100000"}});
  // What the reconciler itself recorded: it changed this HPA 10 s ago (scale-up cooldown 1m).
  HpaStateStore store(fake_, {});
  ASSERT_TRUE(store
                  .update("default", "triton", hpaUid(),
                          [&](HpaRecord& r) {
                            r.lastChange = t0_ - 10s;
                            r.originalMaxReplicas = 7;
                          })
                  .ok());
  auto c = controller(testing::seedPolicies(
      "policies:\n- name: default\n  hpaNamespaces: [default]\n  cooldown: {scaleUp: 1m}\n"));

  auto held = pass(*c, t0_);
  EXPECT_TRUE(held.plan.actions.empty()) << "the recorded cooldown holds, whatever the HPA says: "
                                         << partition::planToJson(held.plan).dump();
  EXPECT_EQ(client_->countWhere([](const testing::Write& w) { return w.resource == "nodes"; }), 0);

  // After the cooldown the HPA is planned like any other: the forged intent neither keeps it out
  // of planning nor sends the reconciler to the nodes it names.
  auto after = pass(*c, t0_ + 2min);
  EXPECT_FALSE(after.plan.actions.empty());
  for (const auto& w : client_->writes()) {
    EXPECT_EQ(w.name.rfind("victim-", 0), std::string::npos) << "wrote " << w.name;
  }
  EXPECT_TRUE(events_->withReason("PartitionChangeIncomplete").empty());
  auto record = testing::recordOf(*fake_, "default", "triton");
  ASSERT_TRUE(record && record->intent);
  EXPECT_NE(record->intent->plan, "forged");
  EXPECT_LE(record->intent->nodes.size(), 2u);
  EXPECT_EQ(record->originalMaxReplicas, 7) << "not the 100000 on the HPA";
  EXPECT_EQ(maxReplicas(), 7) << "raised only once allocatable shows the new partitions";
}

TEST_F(TenancyTest, ARecreatedHpaDoesNotInheritState) {
  HpaStateStore store(fake_, {});
  ASSERT_TRUE(store
                  .update("default", "triton", "uid-before",
                          [&](HpaRecord& r) {
                            r.lastChange = t0_ - 10s;
                            r.intent = HpaIntent{"old-plan", 7, 28, {"a100-node-3"}, t0_ - 10s};
                          })
                  .ok());
  ASSERT_TRUE(
      fake_->patch(hpaRef(), kube::PatchType::kMerge, {{"metadata", {{"uid", "uid-after"}}}}).ok());
  auto c = controller(testing::seedPolicies(
      "policies:\n- name: default\n  hpaNamespaces: [default]\n  cooldown: {scaleUp: 1m}\n"));
  auto r = pass(*c, t0_);
  EXPECT_FALSE(r.plan.actions.empty()) << "neither the old intent nor the old cooldown applies";
  auto record = testing::recordOf(*fake_, "default", "triton");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->uid, "uid-after");
  EXPECT_NE(record->intent->plan, "old-plan");
}

TEST_F(TenancyTest, AFullStateStoreRefusesTheChangeInsteadOfGrowing) {
  ControllerOptions o;
  o.state.maxBytes = 16;  // not even one entry fits
  auto c = controller(testing::seedPolicies(), o);
  auto r = pass(*c, t0_);
  EXPECT_FALSE(r.plan.actions.empty()) << "planned, but";
  EXPECT_FALSE(anyNodeOrHpaWrite()) << "no node, config or HPA changes without recorded state";
  EXPECT_NE(metricsText().find(R"(gpuscale_reconciler_degraded_total{what="state_store_full"})"),
            std::string::npos);
  pass(*c, t0_ + 1s);
  EXPECT_FALSE(anyNodeOrHpaWrite());
}

TEST_F(TenancyTest, AnUnreadableStateStoreStopsThePass) {
  auto c = controller(testing::seedPolicies());
  fake_->failNext("get", core::Status::forbidden("configmaps is forbidden"), 1);
  auto r = pass(*c, t0_);
  EXPECT_FALSE(r.error.empty());
  EXPECT_FALSE(r.planned);
  EXPECT_FALSE(anyNodeOrHpaWrite());
}

// Another tenant's objects stop no pass: an HPA kube-apiserver accepts with a metric target whose
// type names one field while it sets another is read (as the HPA controller reads it), and a pod
// the reconciler cannot count (a GPU limit beyond int64) is planned as if absent, counted once,
// and gets one Warning Event, while the managed HPA is planned exactly as without them.
TEST_F(TenancyTest, AnObjectThatDoesNotReadStopsNoPass) {
  ControllerOptions dryRun;
  dryRun.dryRun = true;
  auto plain = controller(testing::seedPolicies(), dryRun);
  const std::string expected = partition::planToJson(pass(*plain, t0_).plan).dump();
  ASSERT_NE(expected.find("SetMaxReplicas"), std::string::npos);

  auto objects = objectsOf(*fake_);
  objects.push_back(
      {{"kind", "HorizontalPodAutoscaler"},
       {"metadata", {{"name", "tenant"}, {"namespace", "other"}, {"uid", "u-hpa"}}},
       {"spec",
        {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "x"}}},
         {"maxReplicas", 2147483647},
         {"metrics",
          {{{"type", "External"},
            {"external",
             {{"metric", {{"name", "queue"}}},
              {"target", {{"type", "Value"}, {"averageValue", "1"}}}}}},
           {{"type", "Resource"},
            {"resource",
             {{"name", "cpu"},
              {"target", {{"type", "AverageValue"}, {"averageUtilization", 50}}}}}}}}}},
       {"status", {{"currentMetrics", nullptr}, {"desiredReplicas", 0}}}});
  objects.push_back(
      {{"kind", "Pod"},
       {"metadata", {{"name", "greedy"}, {"namespace", "other"}, {"uid", "u-pod"}}},
       {"spec",
        {{"containers",
          {{{"name", "c"},
            {"resources", {{"limits", {{"nvidia.com/gpu", "9223372036854775807"}}}}}}}}}},
       {"status", {{"phase", "Pending"}}}});
  auto c = controller(testing::seedPolicies(), dryRun);
  for (int i = 0; i < 3; ++i) {
    auto r = c->pass(objects, t0_ + i * 1s);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(partition::planToJson(r.plan).dump(), expected);
  }
  const auto skipped = events_->withReason("ObjectSkipped");
  ASSERT_EQ(skipped.size(), 1u) << "one Warning Event, on the pod, over three passes";
  EXPECT_TRUE(skipped[0].warning);
  EXPECT_EQ(skipped[0].target.kind, "Pod");
  EXPECT_EQ(skipped[0].target.ns, "other");
  EXPECT_EQ(skipped[0].target.name, "greedy");
  EXPECT_EQ(skipped[0].target.uid, "u-pod");
  EXPECT_NE(skipped[0].message.find("limits.nvidia.com/gpu"), std::string::npos);
  const std::string text = metricsText();
  EXPECT_NE(
      text.find(
          "gpuscale_reconciler_objects_skipped_total{kind=\"Pod\",reason=\"out_of_range\"} 1"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("kind=\"HorizontalPodAutoscaler\""), std::string::npos)
      << "the tenant's HPA is read";
}

}  // namespace tenancy_test
}  // namespace gpuscale::reconciler
