// KubeActuator's HPA ceilings: lowering one (never below the running replicas, a stale plan changes
// nothing), and through KEDA's ScaledObject when it owns the HPA.
#include <gtest/gtest.h>

#include "actuator_fixture.h"
#include "gpuscale/k8s/well_known_keys.h"

namespace gpuscale::reconciler::testing {
namespace actuator_ceiling_test {

using namespace std::chrono_literals;

TEST_F(ActuatorTest, ScaleInLowersMaxReplicasButNeverBelowCurrentReplicas) {
  LoweringActuator lowering(*this);
  ASSERT_TRUE(lowering.snapshot.ok());
  // The HPA still runs 7 replicas: lowering the ceiling below them is refused.
  lowering.apply(t0_);
  EXPECT_EQ(maxReplicas(), 7);
  ASSERT_TRUE(
      fake_->patch(hpaRef(), kube::PatchType::kMerge, {{"status", {{"currentReplicas", 2}}}}).ok());
  lowering.apply(t0_ + 1s);
  EXPECT_EQ(maxReplicas(), 3);
  EXPECT_EQ(record()->lastChange, t0_ + 1s) << "recorded in the state store, not on the HPA";
  EXPECT_TRUE(k8s::annotationOf(hpa(), "gpuscale.io/last-change").empty());
  EXPECT_EQ(events_->withReason("MaxReplicasLowered").size(), 1u);
  // A stale plan (maxReplicas is no longer 7) changes nothing.
  lowering.apply(t0_ + 2s);
  EXPECT_EQ(events_->withReason("MaxReplicasLowered").size(), 1u);
}

// KEDA's ScaledObject "triton" owning the seed HPA: the ceiling lives in its spec.maxReplicaCount.
class KedaActuatorTest : public ActuatorTest {
 protected:
  void SetUp() override {
    ActuatorTest::SetUp();
    auto so = fake_->create(soRef().named(""),
                            {{"apiVersion", "keda.sh/v1alpha1"},
                             {"kind", "ScaledObject"},
                             {"metadata", {{"name", "triton"}, {"namespace", "default"}}},
                             {"spec", {{"minReplicaCount", 1}, {"maxReplicaCount", 7}}}});
    ASSERT_TRUE(so.ok()) << so.status().toString();
    json owner{{"apiVersion", "keda.sh/v1alpha1"},
               {"kind", "ScaledObject"},
               {"name", "triton"},
               {"uid", (*so)["metadata"]["uid"]},
               {"controller", true}};
    ASSERT_TRUE(fake_
                    ->patch(hpaRef(), kube::PatchType::kMerge,
                            {{"metadata", {{"ownerReferences", json::array({owner})}}}})
                    .ok());
  }
  static kube::ResourceRef soRef() {
    return kube::ResourceRef::collection("keda.sh", "v1alpha1", "scaledobjects", "default")
        .named("triton");
  }
  int maxReplicaCount() { return (*fake_->get(soRef()))["spec"].value("maxReplicaCount", 0); }
  int hpaSpecWrites() {
    return client_->countWhere([](const Write& w) {
      return w.resource == "horizontalpodautoscalers" && w.body.contains("spec");
    });
  }
  int hpaWrites() {
    return client_->countWhere(
        [](const Write& w) { return w.resource == "horizontalpodautoscalers"; });
  }
  // A controller whose first pass reshapes one node and time-slices the other, and whose second
  // (20 s later, the GPU Operator done) raises the ceiling.
  std::unique_ptr<Controller> raisedController() {
    auto c = controller();
    pass(*c, t0_);
    setNode(kReshapeNode, {{"nvidia.com/mig.config.state", "success"}},
            {{"nvidia.com/mig-1g.5gb", "14"}, {"nvidia.com/mig-3g.20gb", "0"}});
    setNode(kSlicedNode, json::object(), {{"nvidia.com/mig-1g.5gb", "14"}});
    pass(*c, t0_ + 20s);
    return c;
  }
  std::optional<HpaStatus> scaledObjectStatus() {
    return decodeHpaStatus(k8s::annotationOf(*fake_->get(soRef()), k8s::kStatusAnnotation));
  }
};

TEST_F(KedaActuatorTest, RaisesTheScaledObjectNeverTheHpa) {
  auto c = raisedController();
  EXPECT_GT(maxReplicaCount(), 7);
  EXPECT_EQ(maxReplicas(), 7) << "KEDA, not gpuscale, copies it into its HPA";
  EXPECT_EQ(hpaSpecWrites(), 0);
  EXPECT_EQ(record()->originalMaxReplicas, 7);
  auto raised = events_->withReason("MaxReplicasRaised");
  ASSERT_EQ(raised.size(), 1u);
  EXPECT_EQ(raised[0].target.kind, "HorizontalPodAutoscaler");
  EXPECT_NE(raised[0].message.find("ScaledObject triton spec.maxReplicaCount 7 -> "),
            std::string::npos)
      << raised[0].message;
  // The status lives on the ScaledObject (KEDA copies its annotations to its HPA); the HPA is
  // never written at all.
  auto status = scaledObjectStatus();
  ASSERT_TRUE(status.has_value());
  EXPECT_NE(status->lastAction.find("ScaledObject triton spec.maxReplicaCount"), std::string::npos);
  EXPECT_EQ(hpaWrites(), 0);
}

// KEDA sets its HPA's annotations to the ScaledObject's on every reconcile. The reconciler keeps
// its status where that does not undo it: no write and no Event per pass follow.
TEST_F(KedaActuatorTest, KedaResettingTheHpaAnnotationsCausesNoWrites) {
  auto c = raisedController();
  pass(*c, t0_ + 30s);
  ASSERT_TRUE(scaledObjectStatus().has_value());
  const auto settled = client_->writes().size();
  const auto events = events_->events().size();
  // What KEDA does to an HPA whose ScaledObject has no gpuscale.io/status (its other annotations,
  // the policy's among them, are the ScaledObject's in a real cluster: kept here).
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(fake_
                    ->patch(hpaRef(), kube::PatchType::kMerge,
                            {{"metadata", {{"annotations", {{"gpuscale.io/status", nullptr}}}}}})
                    .ok());
    pass(*c, t0_ + 40s + i * 10s);
  }
  EXPECT_EQ(client_->writes().size(), settled);
  EXPECT_EQ(events_->events().size(), events);
  EXPECT_EQ(hpaWrites(), 0);
}

// A KEDA HPA whose ScaledObject the informers do not hold (keda.sh not served, or not readable):
// its status is not written, and asking the API server for it every pass is not how it gets there.
TEST_F(KedaActuatorTest, AScaledObjectOutOfTheCacheIsNotFetchedEveryPass) {
  ASSERT_TRUE(fake_->remove(soRef()).ok());
  auto c = controller();
  for (int i = 0; i < 3; ++i) pass(*c, t0_ + i * 10s);
  EXPECT_EQ(client_->gets("scaledobjects"), 0);
  EXPECT_EQ(hpaWrites(), 0);
  EXPECT_EQ(client_->countWhere([](const Write& w) { return w.resource == "scaledobjects"; }), 0);
}

TEST_F(KedaActuatorTest, LowersTheScaledObject) {
  LoweringActuator lowering(*this);
  ASSERT_TRUE(lowering.snapshot.ok());
  ASSERT_TRUE(
      fake_->patch(hpaRef(), kube::PatchType::kMerge, {{"status", {{"currentReplicas", 2}}}}).ok());
  lowering.apply(t0_);
  EXPECT_EQ(maxReplicaCount(), 3);
  EXPECT_EQ(maxReplicas(), 7);
  EXPECT_EQ(hpaSpecWrites(), 0);
  auto lowered = events_->withReason("MaxReplicasLowered");
  ASSERT_EQ(lowered.size(), 1u);
  EXPECT_NE(lowered[0].message.find("ScaledObject triton spec.maxReplicaCount 7 -> 3"),
            std::string::npos)
      << lowered[0].message;
}

}  // namespace actuator_ceiling_test
}  // namespace gpuscale::reconciler::testing
