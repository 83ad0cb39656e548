// The MPS lever through the controller and KubeActuator against the fake API: the seed T4 node
// gets a gpuscale-owned device-plugin config with `sharing.mps`, selected by the node label after
// the ConfigMap is written, and the operation succeeds once allocatable shows the replicas.
#include <gtest/gtest.h>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/device_plugin_config.h"
#include "gpuscale/reconciler/controller.h"

namespace gpuscale::reconciler {
namespace mps_actuation_test {

using nlohmann::json;
using testing::objectsOf;
using testing::RecordingClient;
using testing::Write;
using namespace std::chrono_literals;

constexpr const char* kNode = "t4-node-1";

kube::ResourceRef nodeRef() { return testing::nodeRef(kNode); }

TEST(MpsActuationTest, WritesAnMpsConfigThenFlipsTheLabelThenWaitsForAllocatable) {
  auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
  testing::seed(*fake, partition::testing::loadDump("t4_timeslicing.json"));
  auto client = std::make_shared<RecordingClient>(fake);
  auto events = std::make_shared<MemoryEventRecorder>();
  auto actuator = std::make_shared<KubeActuator>(
      client, events, std::make_shared<NodeLevelGpuPodMapping>(), ActuatorOptions{});
  Controller c(client, actuator,
               testing::seedPolicies("policies:\n- name: t4-inference\n  hpaNamespaces: [default]\n"
                                     "  levers: [mps]\n"
                                     "  mps: {maxReplicas: 4, perPodGpuMemory: 3Gi, "
                                     "changeBusyNodes: true}\n"),
               events,
               std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>()),
               ControllerOptions{});
  const TimePoint t0 = *core::parseRfc3339("2026-11-22T01:00:00Z");

  auto first = c.pass(objectsOf(*fake), t0);
  const json actions = partition::planToJson(first.plan)["actions"];
  ASSERT_FALSE(actions.empty()) << partition::planToJson(first.plan).dump(2);
  EXPECT_EQ(actions[0]["kind"], "Mps");
  EXPECT_EQ(actions[0]["node"], kNode);
  EXPECT_EQ(actions[0]["replicas"], 4) << "15 GiB / 4 = 3.75 GiB per replica >= 3 GiB";

  const std::string label = k8s::labelOf(*fake->get(nodeRef()), k8s::kDevicePluginConfigLabel);
  ASSERT_EQ(label.rfind("gpuscale-", 0), 0u) << label;
  auto cm = fake->get(kube::ResourceRef::collection("", "v1", "configmaps", "gpu-operator")
                          .named("device-plugin-config"));
  ASSERT_TRUE(cm.ok());
  auto config = partition::parseDevicePluginConfig((*cm)["data"][label].get<std::string>());
  ASSERT_TRUE(config.ok()) << config.status().toString();
  ASSERT_TRUE(config->mps.has_value());
  EXPECT_FALSE(config->timeSlicing.has_value());
  EXPECT_EQ(config->mps->replicasFor("nvidia.com/gpu"), 4);
  const int written = client->firstWhere([](const Write& w) {
    return w.resource == "configmaps" && w.name == "device-plugin-config";
  });
  const int flipped = client->firstWhere([](const Write& w) {
    return w.resource == "nodes" && w.name == kNode && w.body.contains("metadata") &&
           w.body["metadata"].contains("labels");
  });
  EXPECT_LT(written, flipped) << "the config exists before the label selects it";
  const auto intent =
      decodeNodeIntent(k8s::annotationOf(*fake->get(nodeRef()), k8s::kIntentAnnotation));
  ASSERT_TRUE(intent.has_value());
  EXPECT_EQ(intent->kind, NodeOpKind::kMps) << "an MPS operation, not time-slicing";

  // The device plugin advertises the replicas: the operation succeeds.
  ASSERT_TRUE(fake->patch(nodeRef(), kube::PatchType::kMerge,
                          {{"status", {{"allocatable", {{"nvidia.com/gpu", "4"}}}}}})
                  .ok());
  c.pass(objectsOf(*fake), t0 + 10s);
  const json node = *fake->get(nodeRef());
  EXPECT_TRUE(k8s::annotationOf(node, k8s::kIntentAnnotation).empty());
  const auto outcome = decodeNodeOutcome(k8s::annotationOf(node, k8s::kOutcomeAnnotation));
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->result, Outcome::kSucceeded);
  EXPECT_EQ(outcome->kind, NodeOpKind::kMps);
  EXPECT_EQ(events->withReason("MpsPlanned").size(), 1u);
  EXPECT_EQ(events->withReason("MpsSucceeded").size(), 1u);
  EXPECT_TRUE(events->withReason("TimeSlicingSucceeded").empty());
}

}  // namespace mps_actuation_test
}  // namespace gpuscale::reconciler
