// KubeActuator on DRA nodes (published_devices.h): after a MIG reshape of a static DRA node the
// operation ends, and the claim-based workload's maxReplicas is raised, only once the driver has
// republished the node's ResourceSlices with the new devices: node allocatable never shows them.
#include <gtest/gtest.h>

#include "actuator_fixture.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "unit/partition/dra_objects.h"

namespace gpuscale::reconciler::testing {
namespace actuator_dra_test {

using namespace std::chrono_literals;

class DraActuatorTest : public ActuatorTest {
 protected:
  void SetUp() override {
    reset(json{{"items", json::array()}});
    seedWatched(*fake_, partition::testing::draMixedCluster());
  }
  PassResult passAll(Controller& c, TimePoint at) { return c.pass(watchedObjectsOf(*fake_), at); }
  int claimsMax() {
    return (*fake_->get(
        kube::ResourceRef::collection("autoscaling", "v2", "horizontalpodautoscalers", "default")
            .named("claims-app")))["spec"]
        .value("maxReplicas", 0);
  }
  bool hasIntent(const std::string& name) {
    return !k8s::annotationOf(node(name), std::string(k8s::kIntentAnnotation)).empty();
  }
  // The driver republishing dra-idle's pool at generation 2 with seven 1g.5gb devices.
  void republish() {
    std::vector<json> devices;
    for (int i = 0; i < 7; ++i) devices.push_back(partition::testing::draMigDevice(0, "1g.5gb", i));
    auto r =
        fake_->create(kube::ResourceRef::collection("resource.k8s.io", "v1", "resourceslices"),
                      partition::testing::draSlice("dra-idle", devices, 2, 1, {}, "dra-idle-gen2"));
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
};

TEST_F(DraActuatorTest, RaisesOnlyOnceTheRepublishedSlicesShowTheNewDevices) {
  auto c = controller();
  auto r = passAll(*c, t0_);
  ASSERT_TRUE(r.error.empty()) << r.error;
  const std::string plan = partition::planToJson(r.plan).dump();
  ASSERT_NE(plan.find(R"("kind":"MigReconfigure","node":"dra-idle")"), std::string::npos) << plan;
  ASSERT_TRUE(hasIntent("dra-idle"));
  // mig-manager reports success, but the driver has not republished: the step waits.
  setNode("dra-idle", {{"nvidia.com/mig.config.state", "success"}});
  passAll(*c, t0_ + 20s);
  EXPECT_TRUE(hasIntent("dra-idle"));
  EXPECT_EQ(claimsMax(), 8);
  EXPECT_TRUE(events_->withReason("MigReconfigureSucceeded").empty());
  // The republished slices show the seven 1g.5gb devices: the step succeeds and the raise follows.
  republish();
  passAll(*c, t0_ + 40s);
  passAll(*c, t0_ + 41s);
  EXPECT_FALSE(hasIntent("dra-idle"));
  EXPECT_EQ(events_->withReason("MigReconfigureSucceeded").size(), 1u);
  EXPECT_GT(claimsMax(), 8);
  auto raised = events_->withReason("MaxReplicasRaised");
  ASSERT_FALSE(raised.empty());
  bool claims = false;
  for (const auto& e : raised) {
    if (e.target.name != "claims-app") continue;
    claims = true;
    EXPECT_NE(e.message.find("the published devices hold"), std::string::npos) << e.message;
  }
  EXPECT_TRUE(claims);
}

// What the static DRA node's Events say they checked: the devices the driver publishes, never
// node allocatable (which never shows them).
TEST_F(DraActuatorTest, EventsNameThePublishedDevicesNotAllocatable) {
  auto c = controller();
  ASSERT_TRUE(passAll(*c, t0_).error.empty());
  setNode("dra-idle", {{"nvidia.com/mig.config.state", "success"}});
  republish();
  passAll(*c, t0_ + 20s);
  passAll(*c, t0_ + 21s);
  for (const auto& [reason, says] : std::vector<std::pair<std::string, std::string>>{
           {"MigReconfigurePlanned", "expecting published devices {"},
           {"MigReconfigureSucceeded", "applied and the published devices show {"}}) {
    auto e = events_->withReason(reason);
    ASSERT_EQ(e.size(), 1u) << reason;
    EXPECT_EQ(e[0].target.name, "dra-idle");
    EXPECT_NE(e[0].message.find(says), std::string::npos) << e[0].message;
    EXPECT_EQ(e[0].message.find("allocatable"), std::string::npos) << e[0].message;
  }
  for (const auto& e : events_->withReason("MaxReplicasRaised")) {
    if (e.target.name == "claims-app") {
      EXPECT_EQ(e.message.find("allocatable"), std::string::npos) << e.message;
    }
  }
}

}  // namespace actuator_dra_test
}  // namespace gpuscale::reconciler::testing
