// The node half of KubeActuator: which config entries a node's operation prunes (its own stale
// ones, by exact ownership, never another node's), which pods stop a reshape, and the taint that
// keeps new pods off a node while its MIG change runs.
#include <gtest/gtest.h>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/config_name.h"
#include "gpuscale/partition/mig_parted_config.h"
#include "gpuscale/partition/mig_restore.h"
#include "gpuscale/reconciler/actuator.h"
#include "gpuscale/reconciler/controller.h"
#include "gpuscale/reconciler/node_operation.h"

namespace gpuscale::reconciler {
namespace node_operation_test {

using nlohmann::json;
using partition::ownedConfigName;
using testing::RecordingClient;
using testing::Write;
using namespace std::chrono_literals;

kube::ResourceRef nodes() { return kube::ResourceRef::collection("", "v1", "nodes"); }
kube::ResourceRef operatorConfigMaps() {
  return kube::ResourceRef::collection("", "v1", "configmaps", "gpu-operator");
}

constexpr const char* kReshapeNode = "a100-node-3";  // the seed dump's idle node the plan reshapes

bool hasReshapeTaint(const json& node) {
  for (const auto& t : node["spec"].value("taints", json::array())) {
    if (t.value("key", "") == k8s::kReshapeTaint && t.value("effect", "") == "NoSchedule")
      return true;
  }
  return false;
}

// Forwards to `inner`; each list of the pods on a node notes whether that node carried the reshape
// taint at that moment.
class TaintProbe final : public kube::ForwardingKubeClient {
 public:
  explicit TaintProbe(std::shared_ptr<kube::KubeClient> inner)
      : ForwardingKubeClient(std::move(inner)) {}
  core::Result<kube::ObjectList> list(const kube::ResourceRef& ref,
                                      const kube::ListOptions& options) override {
    constexpr std::string_view kOnNode = "spec.nodeName=";
    if (ref.resource == "pods" && options.fieldSelector.rfind(kOnNode, 0) == 0) {
      auto node = inner().get(nodes().named(options.fieldSelector.substr(kOnNode.size())));
      taintedAtPodCheck.push_back(node.ok() && hasReshapeTaint(*node));
    }
    return inner().list(ref, options);
  }

  std::vector<bool> taintedAtPodCheck;
};

class NodeOperationTest : public ::testing::Test {
 protected:
  // A fresh cluster from the seed dump with an idle node to reshape.
  void seedReshapeCluster() {
    fake_ = std::make_shared<gpuscale::testing::FakeKubeClient>();
    client_ = std::make_shared<RecordingClient>(fake_);
    events_ = std::make_shared<MemoryEventRecorder>();
    testing::seed(*fake_, partition::testing::loadDump("a100_idle_reshape.json"));
  }
  // A controller acting through `client`, one node operation at a time.
  std::unique_ptr<Controller> controller(std::shared_ptr<kube::KubeClient> client,
                                         std::chrono::seconds migConfigPropagation = {}) {
    ActuatorOptions options;
    options.maxNodesInFlight = 1;
    options.migConfigPropagation = migConfigPropagation;
    auto actuator = std::make_shared<KubeActuator>(
        client, events_, std::make_shared<NodeLevelGpuPodMapping>(), options);
    return std::make_unique<Controller>(
        client, actuator, testing::seedPolicies(), events_,
        std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>()),
        ControllerOptions{});
  }
  json node(const std::string& name) { return *fake_->get(nodes().named(name)); }
  static bool flipsMigConfig(const Write& w) {
    return w.resource == "nodes" && w.name == kReshapeNode && w.body.contains("metadata") &&
           w.body["metadata"].contains("labels") &&
           w.body["metadata"]["labels"].contains(std::string(k8s::kMigConfigLabel));
  }

  std::shared_ptr<gpuscale::testing::FakeKubeClient> fake_ =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  std::shared_ptr<RecordingClient> client_ = std::make_shared<RecordingClient>(fake_);
  std::shared_ptr<MemoryEventRecorder> events_ = std::make_shared<MemoryEventRecorder>();
  TimePoint t0_ = *core::parseRfc3339("2026-11-22T01:00:00Z");
};

// The entry names of the ConfigMap an operation of `kind` writes its config to.
std::set<std::string> entriesOf(gpuscale::testing::FakeKubeClient& fake, NodeOpKind kind) {
  std::set<std::string> out;
  if (kind == NodeOpKind::kTimeSlicing) {
    auto cm = fake.get(operatorConfigMaps().named("device-plugin-config"));
    EXPECT_TRUE(cm.ok());
    if (cm) {
      for (const auto& [key, _] : (*cm)["data"].items()) out.insert(key);
    }
    return out;
  }
  auto cm = fake.get(operatorConfigMaps().named("gpuscale-mig-parted-config"));
  EXPECT_TRUE(cm.ok());
  if (!cm) return out;
  auto parsed = partition::parseMigPartedConfig((*cm)["data"].value("config.yaml", ""));
  EXPECT_TRUE(parsed.ok());
  if (parsed) {
    for (const auto& [name, _] : parsed->configs) out.insert(name);
  }
  return out;
}

TEST_F(NodeOperationTest, PruningKeepsEntriesOfNodesSharingTheNamePrefix) {
  // Two nodes whose names share their first 50 characters.
  const std::string stem = "gke-inference-prod-europe-west4-a100-pool-7f3c9a2e-";
  const std::string a = stem + "1x2b";
  const std::string b = stem + "9q8r";
  struct Row {
    const char* what;
    NodeOpKind kind;
  };
  const std::vector<Row> rows{{"device-plugin ConfigMap", NodeOpKind::kTimeSlicing},
                              {"mig-parted ConfigMap", NodeOpKind::kMig}};
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    fake_ = std::make_shared<gpuscale::testing::FakeKubeClient>();
    client_ = std::make_shared<RecordingClient>(fake_);
    const std::string theirs = ownedConfigName(b, "b's config");
    const std::string stale = ownedConfigName(a, "a's config before last");
    const std::string previous = ownedConfigName(a, "a's config now");
    const std::string wanted = ownedConfigName(a, "a's next config");
    const std::set<std::string> before{theirs, stale, previous, "all-disabled"};
    partition::MigConfigEntry disabled;
    partition::MigPartedConfig mig;
    for (const auto& name : before) mig.configs[name] = {disabled};
    json data = json::object();
    for (const auto& name : before) data[name] = "version: v1\n";
    ASSERT_TRUE(fake_
                    ->create(operatorConfigMaps(),
                             {{"metadata", {{"name", "device-plugin-config"}}}, {"data", data}})
                    .ok());
    ASSERT_TRUE(fake_
                    ->create(operatorConfigMaps(),
                             {{"metadata", {{"name", "gpuscale-mig-parted-config"}}},
                              {"data", {{"config.yaml", partition::emitMigPartedConfig(mig)}}}})
                    .ok());

    NodeIntent intent;
    intent.plan = "p1";
    intent.kind = row.kind;
    intent.label = wanted;
    intent.previous = previous;
    partition::MigPartedConfig next;
    next.configs[wanted] = {disabled};
    intent.config =
        row.kind == NodeOpKind::kMig ? partition::emitMigPartedConfig(next) : "version: v1\n";
    intent.started = t0_;
    for (const auto& [name, label] : {std::pair{a, previous}, std::pair{b, theirs}}) {
      // A mig-manager reports the node's state (without one no MIG step starts).
      json node{{"metadata",
                 {{"name", name},
                  {"labels",
                   {{std::string(intent.labelKey()), label},
                    {std::string(k8s::kMigConfigStateLabel), "success"}}}}}};
      if (name == a)
        node["metadata"]["annotations"] = {
            {std::string(k8s::kIntentAnnotation), encodeNodeIntent(intent)}};
      ASSERT_TRUE(fake_->create(nodes(), node).ok());
    }

    NodeOperations operations(client_, events_, std::make_shared<NodeLevelGpuPodMapping>(), {});
    ActuationReport report;
    EXPECT_TRUE(operations.advance(a, t0_ + 1s, report));
    EXPECT_EQ(entriesOf(*fake_, row.kind),
              (std::set<std::string>{theirs, previous, wanted, "all-disabled"}))
        << "only " << a << "'s stale entry goes";
    EXPECT_EQ(k8s::labelOf(*fake_->get(nodes().named(a)), intent.labelKey()), wanted);
  }
}

// Under a custom ConfigMap mig-manager reads nothing else: after a reshape the node must still be
// relabellable to any stock name. The node's generated configs win over the defaults; names the
// administrator already wrote keep their entries.
TEST_F(NodeOperationTest, StockConfigsAreCarriedIntoTheCustomConfigMap) {
  const std::string a = "a100-node-0";
  const std::string wanted = ownedConfigName(a, "next");
  partition::MigConfigEntry disabled;
  partition::MigConfigEntry generatedBalanced{{}, true, {}, true, {{"1g.5gb", 2}, {"2g.10gb", 1}}};
  partition::MigConfigEntry adminOwn{{}, true, {}, true, {{"7g.40gb", 1}}};
  partition::MigPartedConfig generated, custom, next;
  generated.configs["all-balanced"] = {generatedBalanced};
  custom.configs["all-7g.40gb"] = {adminOwn};
  next.configs[wanted] = {disabled};
  auto mig = [](const std::string& name, const partition::MigPartedConfig& c) {
    return json{{"metadata", {{"name", name}}},
                {"data", {{"config.yaml", partition::emitMigPartedConfig(c)}}}};
  };
  ASSERT_TRUE(fake_->create(operatorConfigMaps(), partition::testing::defaultMigConfigMap()).ok());
  ASSERT_TRUE(fake_->create(operatorConfigMaps(), mig(a + "-mig-config", generated)).ok());
  ASSERT_TRUE(fake_->create(operatorConfigMaps(), mig("gpuscale-mig-parted-config", custom)).ok());
  NodeIntent intent;
  intent.plan = "p1";
  intent.kind = NodeOpKind::kMig;
  intent.label = wanted;
  intent.previous = "all-1g.5gb";
  intent.config = partition::emitMigPartedConfig(next);
  intent.started = t0_;
  ASSERT_TRUE(
      fake_
          ->create(nodes(),
                   {{"metadata",
                     {{"name", a},
                      {"labels",
                       {{std::string(k8s::kMigConfigLabel), "x"},
                        {std::string(k8s::kMigConfigStateLabel), "success"}}},
                      {"annotations",
                       {{std::string(k8s::kIntentAnnotation), encodeNodeIntent(intent)}}}}}})
          .ok());

  NodeOperations operations(client_, events_, std::make_shared<NodeLevelGpuPodMapping>(), {});
  ActuationReport report;
  EXPECT_TRUE(operations.advance(a, t0_ + 1s, report));
  auto cm = fake_->get(operatorConfigMaps().named("gpuscale-mig-parted-config"));
  ASSERT_TRUE(cm.ok());
  auto file = partition::parseMigPartedConfig((*cm)["data"].value("config.yaml", ""));
  ASSERT_TRUE(file.ok()) << file.status().toString();
  auto defaults = partition::parseMigPartedConfig(
      partition::testing::defaultMigConfigMap()["data"].value("config.yaml", ""));
  ASSERT_TRUE(defaults.ok());
  for (const auto& [name, _] : defaults->configs) {
    EXPECT_TRUE(file->configs.contains(name)) << name << " not carried over";
  }
  EXPECT_TRUE(file->configs.contains(wanted));
  EXPECT_EQ(file->configs.at("all-balanced"), generated.configs.at("all-balanced"))
      << "the node's generated config wins over the default";
  EXPECT_EQ(file->configs.at("all-7g.40gb"), custom.configs.at("all-7g.40gb"))
      << "the administrator's entry is kept";
  EXPECT_EQ(k8s::labelOf(*fake_->get(nodes().named(a)), k8s::kMigConfigLabel), wanted);
  EXPECT_EQ(partition::decodeMigRestore(
                k8s::annotationOf(*fake_->get(nodes().named(a)), k8s::kMigRestoreAnnotation)),
            (partition::MigRestore{"x", wanted}))
      << "the flip records what a give-back returns to";
}

TEST_F(NodeOperationTest, EveryKindOfGpuUserStopsTheReshape) {
  json sidecar{{"name", "proxy"},
               {"restartPolicy", "Always"},
               {"resources", {{"limits", {{"nvidia.com/mig-3g.20gb", "1"}}}}}};
  json init{{"name", "warmup"}, {"resources", {{"limits", {{"nvidia.com/mig-3g.20gb", "1"}}}}}};
  json cpu{{"name", "app"}, {"resources", {{"requests", {{"cpu", "1"}}}}}};
  struct Row {
    const char* what;
    json spec;
    int flips;  // of nvidia.com/mig.config
  };
  const std::vector<Row> rows{
      {"a CPU-only pod does not stop it", {{"containers", {cpu}}}, 1},
      {"an init container with a MIG device",
       {{"containers", {cpu}}, {"initContainers", {init}}},
       0},
      {"a sidecar with a MIG device", {{"containers", {cpu}}, {"initContainers", {sidecar}}}, 0},
      {"a DRA resource claim",
       {{"containers", {cpu}},
        {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimTemplateName", "one-gpu"}}}}},
       0},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    seedReshapeCluster();
    auto c = controller(client_);
    auto stale = testing::objectsOf(*fake_);  // the plan is made from this view: no such pod
    json pod{{"apiVersion", "v1"},
             {"kind", "Pod"},
             {"metadata", {{"name", "other"}, {"namespace", "default"}}},
             {"spec", row.spec},
             {"status", {{"phase", "Running"}}}};
    pod["spec"]["nodeName"] = kReshapeNode;
    ASSERT_TRUE(
        fake_->create(kube::ResourceRef::collection("", "v1", "pods", "default"), pod).ok());
    auto r = c->pass(stale, t0_);
    ASSERT_FALSE(r.plan.actions.empty());
    EXPECT_EQ(client_->countWhere(flipsMigConfig), row.flips);
    EXPECT_EQ(events_->withReason("ReshapeSkipped").size(), row.flips == 0 ? 1u : 0u);
  }
}

TEST_F(NodeOperationTest, NewPodsAreKeptOffTheNodeWhileItsMigChangeRuns) {
  struct Row {
    const char* what;
    json mig;  // what mig-manager and the device plugin then report: labels, allocatable
    Outcome result;
  };
  const std::vector<Row> rows{
      {"mig-manager succeeds",
       {{"labels", {{"nvidia.com/mig.config.state", "success"}}},
        {"allocatable", {{"nvidia.com/mig-1g.5gb", "14"}, {"nvidia.com/mig-3g.20gb", "0"}}}},
       Outcome::kSucceeded},
      {"mig-manager fails",
       {{"labels", {{"nvidia.com/mig.config.state", "failed"}}}},
       Outcome::kFailed},
      {"someone else takes the node's MIG config",
       {{"labels", {{"nvidia.com/mig.config", "all-balanced"}}}},
       Outcome::kSuperseded},
  };
  const json theirs{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}};
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    seedReshapeCluster();
    ASSERT_TRUE(fake_
                    ->patch(nodes().named(kReshapeNode), kube::PatchType::kMerge,
                            {{"spec", {{"taints", {theirs}}}}})
                    .ok());
    auto probe = std::make_shared<TaintProbe>(client_);
    auto c = controller(probe);
    c->pass(testing::objectsOf(*fake_), t0_);

    // Tainted before the last pod check, which came before the label flip.
    EXPECT_TRUE(hasReshapeTaint(node(kReshapeNode)));
    ASSERT_FALSE(probe->taintedAtPodCheck.empty());
    EXPECT_TRUE(probe->taintedAtPodCheck.back()) << "the last pod check ran on a tainted node";
    const int taint = client_->firstWhere([](const Write& w) {
      return w.name == kReshapeNode && w.body.contains("spec") && w.body["spec"].contains("taints");
    });
    ASSERT_GE(taint, 0);
    EXPECT_LT(taint, client_->firstWhere(flipsMigConfig));
    EXPECT_EQ(node(kReshapeNode)["spec"]["taints"].size(), 2u) << "other taints are kept";

    json patch{{"metadata", {{"labels", row.mig["labels"]}}}};
    if (row.mig.contains("allocatable"))
      patch["status"] = {{"allocatable", row.mig["allocatable"]}};
    ASSERT_TRUE(fake_->patch(nodes().named(kReshapeNode), kube::PatchType::kMerge, patch).ok());
    c->pass(testing::objectsOf(*fake_), t0_ + 10s);
    EXPECT_EQ(
        decodeNodeOutcome(k8s::annotationOf(node(kReshapeNode), k8s::kOutcomeAnnotation))->result,
        row.result);
    EXPECT_FALSE(hasReshapeTaint(node(kReshapeNode))) << "the taint ends with the MIG step";
    EXPECT_EQ(node(kReshapeNode)["spec"]["taints"], json::array({theirs}));
  }
}

TEST_F(NodeOperationTest, AMigConfigNewToTheConfigMapWaitsForMigManagersCopyBeforeTheLabelFlip) {
  struct Row {
    const char* what;
    std::chrono::seconds propagation;
    std::vector<std::chrono::seconds> passesBeforeFlip;  // after t0, none of them flips
    std::chrono::seconds flipAt;
  };
  const std::vector<Row> rows{
      {"no propagation delay: flipped in the pass that writes the config", 0s, {}, 0s},
      {"90 s: not flipped (nor tainted) before, flipped once they passed",
       90s,
       {0s, 30s, 89s},
       91s},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    seedReshapeCluster();
    auto c = controller(client_, row.propagation);
    for (auto at : row.passesBeforeFlip) {
      c->pass(testing::objectsOf(*fake_), t0_ + at);
      EXPECT_LT(client_->firstWhere(flipsMigConfig), 0) << "flipped " << at.count() << " s in";
      EXPECT_FALSE(hasReshapeTaint(node(kReshapeNode)));
      auto intent = decodeNodeIntent(k8s::annotationOf(node(kReshapeNode), k8s::kIntentAnnotation));
      ASSERT_TRUE(intent.has_value());
      EXPECT_EQ(intent->configWritten, t0_) << "the first write is the one that counts";
    }
    c->pass(testing::objectsOf(*fake_), t0_ + row.flipAt);
    EXPECT_GE(client_->firstWhere(flipsMigConfig), 0);
    EXPECT_TRUE(hasReshapeTaint(node(kReshapeNode)));
  }
}

}  // namespace node_operation_test
}  // namespace gpuscale::reconciler
