// Give-back on static DRA nodes (migGiveBack: restore): once the burst of a claim-based workload is
// over, the planner returns a node gpuscale reshaped to its geometry from before the burst and
// lowers the HPA's maxReplicas, as on device-plugin nodes; a node where any claim is allocated to a
// pod is left as it is.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dra_objects.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/plan.h"
#include "kube_objects.h"
#include "planned.h"

namespace gpuscale::partition {
namespace planner_dra_give_back_test {

using testing::actionsWithoutConfig;
using testing::json;

// After the burst: dra-static's seven 1g.5gb devices, three of them claimed by claims-app's pods;
// dra-idle, reshaped by gpuscale from all-3g.20gb to seven 1g.5gb (its mig-restore record), its
// pool republished at generation 2. claims-app runs 3 replicas (4 with `podOnIdle`, the fourth
// holding a 1g.5gb device of dra-idle), its HPA raised from 7 to 14 and not blocked.
json afterTheBurst(bool podOnIdle) {
  const std::string g1 = ownedConfigName("dra-idle", "burst");
  auto idle = testing::draNode("dra-idle", g1);
  idle["metadata"]["annotations"]["gpuscale.io/mig-restore"] =
      json{{"before", "all-3g.20gb"}, {"applied", g1}}.dump();
  std::vector<json> items{
      testing::draNode("dra-static", "all-1g.5gb"), idle,
      testing::configMap("gpu-operator", "gpuscale-mig-parted-config",
                         {{"config.yaml", "version: v1\nmig-configs:\n  " + g1 +
                                              ":\n    - devices: [0]\n      mig-enabled: true\n"
                                              "      mig-devices: {\"1g.5gb\": 7}\n"}}),
      testing::draDeviceClass("mig.nvidia.com", "mig"),
      testing::draClaimTemplate("default", "one-slice", "mig.nvidia.com", 1,
                                {"device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"})};
  std::vector<json> staticDevices, idleDevices;
  for (int i = 0; i < 7; ++i) {
    staticDevices.push_back(testing::draMigDevice(0, "1g.5gb", i));
    idleDevices.push_back(testing::draMigDevice(0, "1g.5gb", i));
  }
  items.push_back(testing::draSlice("dra-static", staticDevices));
  items.push_back(testing::draSlice("dra-idle", idleDevices, 2));
  const int replicas = podOnIdle ? 4 : 3;
  for (int i = 0; i < replicas; ++i) {
    const std::string node = i < 3 ? "dra-static" : "dra-idle";
    const std::string pod = "claims-app-" + std::to_string(i);
    items.push_back(testing::claimPod("claims-app", i, "one-slice", node));
    items.push_back(testing::draClaim("default", pod + "-gpu", pod, node,
                                      i < 3 ? staticDevices[i]["name"].get<std::string>()
                                            : idleDevices[0]["name"].get<std::string>()));
  }
  items.push_back(testing::claimDeployment("claims-app", replicas, "one-slice"));
  items.push_back(testing::hpa("default", "claims-app",
                               testing::hpaSpec(1, 14, replicas, replicas, "10", "50", false)));
  return testing::migCluster(items);
}

TEST(PlannerDraGiveBackTest, RestoresTheGeometryOnlyWhereNoClaimIsAllocated) {
  const json restored = json::parse(R"([
      {"kind": "MigReconfigure", "node": "dra-idle",
       "gpus": [{"index": 0, "from": {"1g.5gb": 7}, "to": {"3g.20gb": 2}}]},
      {"kind": "SetMaxReplicas", "namespace": "default", "name": "claims-app",
       "from": 14, "to": 7}])");
  for (bool podOnIdle : {false, true}) {
    SCOPED_TRACE(podOnIdle ? "a claim allocated on dra-idle" : "dra-idle idle");
    auto p = testing::planned(afterTheBurst(podOnIdle),
                              testing::policiesFrom("name: default\nhpaNamespaces: [default]\n"
                                                    "levers: [migReshape]\nmigGiveBack: restore\n"),
                              testing::kNow, [](ClusterSnapshot& s) {
                                for (auto& h : s.hpas) {
                                  h.lastChange = *core::parseRfc3339("2026-11-22T00:00:00Z");
                                  h.originalMaxReplicas = 7;
                                }
                              });
    ASSERT_EQ(p->workloads.size(), 1u);
    EXPECT_FALSE(p->workloads[0].blocked);
    // With a pod's claim on dra-idle, its devices stay and so does the ceiling they give.
    EXPECT_EQ(actionsWithoutConfig(p->plan), podOnIdle ? json::array() : restored)
        << planToJson(p->plan).dump(2);
  }
}

}  // namespace planner_dra_give_back_test
}  // namespace gpuscale::partition
