// The off-ramp (cleanup.h) on a fake cluster: it waits for a MIG change in flight (and gives up at
// its deadline), restores maxReplicas from the state store for the HPA of the recorded uid only,
// removes every gpuscale.io/ key but the owner's policy choice, the reshape taint (other taints
// stay), optionally returns gpuscale-owned config labels to the stock ones, deletes the state
// store, and a second run finds nothing to do.
#include "gpuscale/reconciler/cleanup.h"

#include <gtest/gtest.h>

#include "cluster_fixture.h"
#include "gpuscale/partition/config_name.h"

namespace gpuscale::reconciler {
namespace cleanup_test {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

kube::ResourceRef nodeRef(const std::string& name = {}) {
  auto ref = kube::ResourceRef::collection("", "v1", "nodes");
  return name.empty() ? ref : ref.named(name);
}

kube::ResourceRef hpaRef(const std::string& name = {}) {
  auto ref = kube::ResourceRef::collection("autoscaling", "v2", "horizontalpodautoscalers", "team");
  return name.empty() ? ref : ref.named(name);
}

std::string migIntent(NodeOpPhase phase) {
  NodeIntent intent;
  intent.plan = "p1";
  intent.kind = NodeOpKind::kMig;
  intent.phase = phase;
  intent.label = partition::ownedConfigName("gpu-0", "x");
  intent.previous = "all-3g.20gb";
  return encodeNodeIntent(intent);
}

// gpu-0: reshaping (taint, intent, outcome), labels naming gpuscale's configs; gpu-1: a stock MIG
// config and someone else's taint.
struct Cluster {
  std::shared_ptr<gpuscale::testing::FakeKubeClient> fake =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  std::string owned = partition::ownedConfigName("gpu-0", "x");

  explicit Cluster(std::string migState = "success") {
    create(nodeRef(),
           {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata",
             {{"name", "gpu-0"},
              {"labels",
               {{"nvidia.com/mig.config", owned},
                {"nvidia.com/mig.config.state", migState},
                {"nvidia.com/device-plugin.config", owned},
                {"gpuscale.io/anything", "x"},
                {"kubernetes.io/hostname", "gpu-0"}}},
              {"annotations",
               {{"gpuscale.io/intent", migIntent(NodeOpPhase::kApplied)},
                {"gpuscale.io/outcome", "{}"},
                {"gpuscale.io/backoff-until", "2026-11-22T01:00:00Z"},
                {"keep.example.com/note", "mine"}}}}},
            {"spec",
             {{"taints", json::array({{{"key", "gpuscale.io/reshape"}, {"effect", "NoSchedule"}},
                                      {{"key", "dedicated"}, {"effect", "NoSchedule"}}})}}}});
    create(nodeRef(),
           {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata",
             {{"name", "gpu-1"},
              {"labels",
               {{"nvidia.com/mig.config", "all-1g.5gb"},
                {"nvidia.com/mig.config.state", "success"}}}}},
            {"spec", {{"taints", json::array({{{"key", "other"}, {"effect", "NoExecute"}}})}}}});
  }

  void create(const kube::ResourceRef& ref, json object) {
    auto r = fake->create(ref, object);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }

  // HPA team/<name> with maxReplicas `max`, gpuscale's status annotation and the owner's policy.
  std::string hpa(const std::string& name, int max) {
    create(hpaRef(), {{"apiVersion", "autoscaling/v2"},
                      {"kind", "HorizontalPodAutoscaler"},
                      {"metadata",
                       {{"name", name},
                        {"namespace", "team"},
                        {"uid", "uid-" + name},
                        {"annotations",
                         {{"gpuscale.io/partition-policy", "inference"},
                          {"gpuscale.io/status", "{\"ceiling\":4}"}}}}},
                      {"spec", {{"minReplicas", 1}, {"maxReplicas", max}}}});
    return "uid-" + name;
  }

  void store(const std::map<std::string, HpaRecord>& records) {
    json data = json::object();
    for (const auto& [name, record] : records) {
      data[hpaRecordKey("team", name)] = encodeHpaRecord(record);
    }
    create(kube::ResourceRef::collection("", "v1", "configmaps", "default"),
           {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", "gpuscale-reconciler-state"}, {"namespace", "default"}}},
            {"data", data}});
  }

  json node(const std::string& name) { return *fake->get(nodeRef(name)); }
  json hpaObject(const std::string& name) { return *fake->get(hpaRef(name)); }
};

bool hasOurKey(const json& map) {
  for (const auto& [key, value] : map.items()) {
    if (key.rfind("gpuscale.io/", 0) == 0) return true;
  }
  return false;
}

CleanupOptions quickOptions(Clock::time_point* clock) {
  CleanupOptions o;
  o.waitTimeout = 10s;
  o.pollInterval = 2s;
  o.now = [clock] { return *clock; };
  o.sleep = [clock](std::chrono::milliseconds d) { *clock += d; };
  return o;
}

TEST(CleanupTest, RemovesEveryTraceAndRestoresMaxReplicasThenFindsNothingToDo) {
  Cluster c;
  const std::string uid = c.hpa("triton", 12);
  c.hpa("untouched", 3);
  HpaRecord raised;
  raised.uid = uid;
  raised.originalMaxReplicas = 9;
  HpaRecord recreated;
  recreated.uid = "another-uid";
  recreated.originalMaxReplicas = 1;
  c.store({{"triton", raised}, {"untouched", recreated}});
  Clock::time_point clock{};

  auto report = cleanup(c.fake, quickOptions(&clock));
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_TRUE(report->clean()) << cleanupReportText(*report);
  EXPECT_EQ(report->nodesCleaned, std::vector<std::string>{"gpu-0"});
  EXPECT_EQ(report->hpasRestored, std::vector<std::string>{"team/triton: 12 -> 9"});
  EXPECT_TRUE(report->stateStoreDeleted);

  json node = c.node("gpu-0");
  EXPECT_FALSE(hasOurKey(node["metadata"]["labels"])) << node.dump();
  EXPECT_FALSE(hasOurKey(node["metadata"]["annotations"])) << node.dump();
  EXPECT_EQ(node["metadata"]["annotations"]["keep.example.com/note"], "mine");
  EXPECT_EQ(node["spec"]["taints"],
            json::array({{{"key", "dedicated"}, {"effect", "NoSchedule"}}}));
  EXPECT_EQ(node["metadata"]["labels"]["nvidia.com/mig.config"], c.owned)
      << "without restoreStockConfigs the config labels stay";
  EXPECT_EQ(c.node("gpu-1")["spec"]["taints"].size(), 1u);

  const json triton = c.hpaObject("triton");
  EXPECT_EQ(triton["spec"]["maxReplicas"], 9);
  EXPECT_EQ(triton["metadata"]["annotations"],
            json({{"gpuscale.io/partition-policy", "inference"}}))
      << "the owner's policy choice stays, gpuscale's status goes";
  EXPECT_EQ(c.hpaObject("untouched")["spec"]["maxReplicas"], 3)
      << "a record of another uid does not apply";
  EXPECT_EQ(c.fake->get(testing::stateStoreRef()).status().httpCode(), 404);

  auto again = cleanup(c.fake, quickOptions(&clock));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->clean());
  EXPECT_EQ(cleanupReportText(*again), "nothing to clean: no trace of gpuscale-reconciler found\n");
}

// KEDA's ScaledObject holds the ceiling of the HPA it owns: the original goes back there (a
// maxReplicas written to the HPA KEDA would overwrite), and the status annotation leaves it.
TEST(CleanupTest, RestoresTheCeilingOfAKedaHpaOnItsScaledObject) {
  Cluster c;
  const auto scaledObjects =
      kube::ResourceRef::collection("keda.sh", "v1alpha1", "scaledobjects", "team");
  c.create(scaledObjects, {{"apiVersion", "keda.sh/v1alpha1"},
                           {"kind", "ScaledObject"},
                           {"metadata",
                            {{"name", "triton"},
                             {"namespace", "team"},
                             {"uid", "uid-so"},
                             {"annotations", {{"gpuscale.io/status", "{\"ceiling\":28}"}}}}},
                           {"spec", {{"maxReplicaCount", 28}}}});
  const std::string uid = c.hpa("keda-hpa-triton", 28);
  json owner{{"apiVersion", "keda.sh/v1alpha1"},
             {"kind", "ScaledObject"},
             {"name", "triton"},
             {"uid", "uid-so"},
             {"controller", true}};
  ASSERT_TRUE(c.fake
                  ->patch(hpaRef("keda-hpa-triton"), kube::PatchType::kMerge,
                          {{"metadata", {{"ownerReferences", json::array({owner})}}}})
                  .ok());
  HpaRecord raised;
  raised.uid = uid;
  raised.originalMaxReplicas = 7;
  c.store({{"keda-hpa-triton", raised}});
  Clock::time_point clock{};

  auto report = cleanup(c.fake, quickOptions(&clock));
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_TRUE(report->clean()) << cleanupReportText(*report);
  EXPECT_EQ(report->hpasRestored,
            std::vector<std::string>{
                "team/keda-hpa-triton: 28 -> 7 (ScaledObject triton spec.maxReplicaCount)"});
  const json so = *c.fake->get(scaledObjects.named("triton"));
  EXPECT_EQ(so["spec"]["maxReplicaCount"], 7);
  EXPECT_FALSE(so["metadata"].contains("annotations") && hasOurKey(so["metadata"]["annotations"]))
      << so.dump();
  EXPECT_EQ(c.hpaObject("keda-hpa-triton")["spec"]["maxReplicas"], 28)
      << "KEDA, not the off-ramp, copies the ceiling into its HPA";
  EXPECT_TRUE(report->stateStoreDeleted);
}

TEST(CleanupTest, WaitsForAMigChangeInFlightAndGivesUpAtTheDeadline) {
  struct Row {
    const char* what;
    int pollsUntilDone;  // -1: mig-manager never answers
    bool stillInFlight;
  };
  const std::vector<Row> rows{
      {"mig-manager answers on the third look", 2, false},
      {"mig-manager never answers: the wait ends, the node is cleaned anyway", -1, true},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    Cluster c("pending");
    Clock::time_point clock{};
    CleanupOptions o = quickOptions(&clock);
    int sleeps = 0;
    o.sleep = [&](std::chrono::milliseconds d) {
      clock += d;
      if (++sleeps == row.pollsUntilDone) {
        ASSERT_TRUE(
            c.fake
                ->patch(nodeRef("gpu-0"), kube::PatchType::kMerge,
                        {{"metadata", {{"labels", {{"nvidia.com/mig.config.state", "success"}}}}}})
                .ok());
      }
    };
    auto report = cleanup(c.fake, o);
    ASSERT_TRUE(report.ok()) << report.status().toString();
    EXPECT_EQ(!report->stillInFlight.empty(), row.stillInFlight);
    EXPECT_EQ(report->clean(), !row.stillInFlight);
    EXPECT_EQ(sleeps, row.stillInFlight ? 5 : 2) << "polled every 2 s within 10 s";
    EXPECT_FALSE(hasOurKey(c.node("gpu-0")["metadata"]["annotations"]));
  }
}

TEST(CleanupTest, ReturnsGpuscaleOwnedConfigLabelsToTheStockOnes) {
  struct Row {
    const char* what;
    std::string stockDevicePlugin;
    json wantDevicePlugin;  // null: the label is removed
  };
  const std::vector<Row> rows{
      {"device-plugin label removed (the operator's default applies)", "", nullptr},
      {"device-plugin label set to a named stock config", "default-any", "default-any"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    Cluster c;
    Clock::time_point clock{};
    CleanupOptions o = quickOptions(&clock);
    o.restoreStockConfigs = true;
    o.stockDevicePluginConfig = row.stockDevicePlugin;
    auto report = cleanup(c.fake, o);
    ASSERT_TRUE(report.ok()) << report.status().toString();
    json labels = c.node("gpu-0")["metadata"]["labels"];
    EXPECT_EQ(labels["nvidia.com/mig.config"], "all-disabled");
    EXPECT_EQ(labels.contains("nvidia.com/device-plugin.config")
                  ? labels["nvidia.com/device-plugin.config"]
                  : json(nullptr),
              row.wantDevicePlugin);
    EXPECT_EQ(labels["kubernetes.io/hostname"], "gpu-0");
    EXPECT_EQ(c.node("gpu-1")["metadata"]["labels"]["nvidia.com/mig.config"], "all-1g.5gb")
        << "a config gpuscale does not own is left alone";
  }
}

TEST(CleanupTest, AFailedRestoreKeepsTheStateStore) {
  Cluster c;
  const std::string uid = c.hpa("triton", 12);
  HpaRecord raised;
  raised.uid = uid;
  raised.originalMaxReplicas = 9;
  c.store({{"triton", raised}});
  Clock::time_point clock{};
  c.fake->failNext("patch", core::Status::forbidden("no"), 100);
  auto report = cleanup(c.fake, quickOptions(&clock));
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_FALSE(report->clean());
  EXPECT_FALSE(report->stateStoreDeleted);
  EXPECT_TRUE(c.fake->get(testing::stateStoreRef()).ok()) << "what is still to restore is kept";
  EXPECT_NE(cleanupReportText(*report).find("failed (run cleanup again)"), std::string::npos);
}

TEST(CleanupTest, StopsTheReconcilersDeploymentFirstAndCleansOnlyOnceItsPodsAreGone) {
  struct Row {
    const char* what;
    bool deployment;
    int pollsUntilGone;  // -1: the pod never ends
    bool cleaned;
  };
  const std::vector<Row> rows{
      {"the pods end on the second look: scaled to 0, then cleaned", true, 2, true},
      {"a pod outlives the wait: an error, nothing cleaned", true, -1, false},
      {"the Deployment is already gone: cleaned", false, 0, true},
  };
  const auto pods = kube::ResourceRef::collection("", "v1", "pods", "default");
  const auto deployments = kube::ResourceRef::collection("apps", "v1", "deployments", "default");
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    Cluster c;
    if (row.deployment) {
      // The fake answers /scale with the object itself: the selector is where a Scale has it.
      c.create(deployments,
               {{"apiVersion", "apps/v1"},
                {"kind", "Deployment"},
                {"metadata", {{"name", "gpuscale-reconciler"}, {"namespace", "default"}}},
                {"spec", {{"replicas", 2}}},
                {"status", {{"selector", "app=gpuscale-reconciler"}}}});
      c.create(pods, {{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata",
                       {{"name", "rec-0"},
                        {"namespace", "default"},
                        {"labels", {{"app", "gpuscale-reconciler"}}}}}});
    }
    Clock::time_point clock{};
    CleanupOptions o = quickOptions(&clock);
    o.stopDeployment = "gpuscale-reconciler";
    int sleeps = 0;
    o.sleep = [&](std::chrono::milliseconds d) {
      clock += d;
      if (++sleeps == row.pollsUntilGone) {
        ASSERT_TRUE(c.fake->remove(pods.named("rec-0")).ok());
      }
    };

    auto report = cleanup(c.fake, o);
    if (row.deployment) {
      EXPECT_EQ((*c.fake->get(deployments.named("gpuscale-reconciler")))["spec"]["replicas"], 0);
    }
    ASSERT_EQ(report.ok(), row.cleaned) << report.status().toString();
    EXPECT_EQ(hasOurKey(c.node("gpu-0")["metadata"]["annotations"]), !row.cleaned);
    if (!row.cleaned) {
      EXPECT_NE(report.status().message().find("still run"), std::string::npos)
          << report.status().toString();
    }
  }
}

}  // namespace cleanup_test
}  // namespace gpuscale::reconciler
