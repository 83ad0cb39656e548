// The controller's informers on a fake cluster: the DRA kinds are watched where resource.k8s.io/v1
// is served and the passes plan on them, and where it is not served the controller still syncs
// and plans the device-plugin nodes (a mixed cluster: one device-plugin A100, three DRA nodes).
#include "gpuscale/reconciler/controller.h"

#include <thread>

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/reconciler/actuator.h"
#include "unit/partition/dra_objects.h"

namespace gpuscale::reconciler {
namespace controller_test {

using nlohmann::json;
using namespace std::chrono_literals;

const TimePoint kNow = *core::parseRfc3339("2026-11-22T01:00:00Z");

struct Fixture {
  std::shared_ptr<gpuscale::testing::FakeKubeClient> fake =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  std::shared_ptr<ReconcilerMetrics> metrics =
      std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>());
  std::unique_ptr<Controller> controller;

  explicit Fixture(bool draServed) {
    if (draServed) {
      json resources = json::array();
      for (const char* r :
           {"resourceslices", "deviceclasses", "resourceclaimtemplates", "resourceclaims"}) {
        resources.push_back({{"name", r}});
      }
      fake->setPath("/apis/resource.k8s.io/v1", {{"resources", resources}});
    }
    testing::seedWatched(*fake, partition::testing::draMixedCluster());
    auto events = std::make_shared<MemoryEventRecorder>();
    auto actuator = std::make_shared<KubeActuator>(
        fake, events, std::make_shared<NodeLevelGpuPodMapping>(), ActuatorOptions{});
    ControllerOptions options;
    options.dryRun = true;
    options.operatorNamespace = "gpu-operator";
    controller = std::make_unique<Controller>(fake, actuator, testing::seedPolicies(), events,
                                              metrics, options);
    // Never the leader: no pass runs on the loop; the test runs them.
    controller->start([] { return false; });
  }
  ~Fixture() { controller->stop(); }

  bool synced() const {
    for (int i = 0; i < 1000 && !controller->synced(); ++i) std::this_thread::sleep_for(10ms);
    return controller->synced();
  }
  // The ceiling the pass found for the HPA `name`, -1 when it planned nothing for it.
  int ceilingOf(const partition::Plan& plan, const std::string& name) const {
    for (const auto& d : plan.demands) {
      if (d.name == name) return d.ceiling;
    }
    return -1;
  }
};

TEST(ControllerTest, PlansClaimsFromTheDraObjectsItWatches) {
  Fixture f(true);
  ASSERT_TRUE(f.synced());
  auto r = f.controller->passFromCaches(kNow);
  ASSERT_TRUE(r.error.empty()) << r.error;
  const std::string plan = partition::planToJson(r.plan).dump();
  // The seven claimed 1g.5gb devices of dra-static hold the claim-based workload's ceiling; the
  // device-plugin workload is planned in the same pass.
  EXPECT_EQ(f.ceilingOf(r.plan, "claims-app"), 7) << plan;
  EXPECT_EQ(f.ceilingOf(r.plan, "plugin-app"), 7) << plan;
  const std::string served =
      "gpuscale_reconciler_optional_resource_served{resource=\"resourceslices.resource.k8s.io\"} 1";
  auto exposition = [&] {
    return prometheus::TextSerializer().Serialize(f.metrics->registry()->Collect());
  };
  for (int i = 0; i < 1000 && exposition().find(served) == std::string::npos; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_NE(exposition().find(served), std::string::npos) << exposition();
}

TEST(ControllerTest, WithoutDraServedItStillSyncsAndPlansTheDevicePluginNodes) {
  Fixture f(false);
  ASSERT_TRUE(f.synced()) << "a kind the cluster does not serve is not waited for";
  auto r = f.controller->passFromCaches(kNow);
  ASSERT_TRUE(r.error.empty()) << r.error;
  const std::string plan = partition::planToJson(r.plan).dump();
  EXPECT_NE(plan.find(R"("kind":"SetMaxReplicas","namespace":"default","name":"plugin-app")"),
            std::string::npos)
      << plan;
  EXPECT_EQ(f.ceilingOf(r.plan, "claims-app"), -1) << "claims not counted: not planned " << plan;
}

}  // namespace controller_test
}  // namespace gpuscale::reconciler
