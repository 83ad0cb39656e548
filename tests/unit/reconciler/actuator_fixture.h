// The fixture of the KubeActuator tests: the seed dump a100_idle_reshape.json in a fake API behind
// a write-recording client, a controller built as a fresh process would build it, and readers of
// the nodes and the triton HPA.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/k8s/object_accessors.h"
#include "gpuscale/reconciler/actuator.h"
#include "gpuscale/reconciler/controller.h"

namespace gpuscale::reconciler::testing {

constexpr const char* kReshapeNode = "a100-node-3";
constexpr const char* kSlicedNode = "a100-node-1";

inline kube::ResourceRef hpaRef() { return tritonHpaRef(); }

class ActuatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::seed(*fake_, partition::testing::loadDump("a100_idle_reshape.json"));
    options_.maxNodesInFlight = 2;
  }

  // A controller as a freshly started process would build it (policies from `policyFile`, "" for
  // the built-in default).
  std::unique_ptr<Controller> controller(
      bool dryRun = false,
      std::shared_ptr<GpuPodMapping> gpuPods = std::make_shared<NodeLevelGpuPodMapping>(),
      const std::string& policyFile = "") {
    auto actuator = std::make_shared<KubeActuator>(client_, events_, gpuPods, options_);
    std::shared_ptr<PolicySource> policies = testing::seedPolicies();
    if (!policyFile.empty()) {
      auto fromFile = PolicySource::open(policyFile);
      EXPECT_TRUE(fromFile.ok()) << fromFile.status().toString();
      policies = *fromFile;
    }
    ControllerOptions o;
    o.dryRun = dryRun;
    return std::make_unique<Controller>(
        client_, actuator, policies, events_,
        std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>()), o);
  }

  // A fresh fake API holding `cluster` (a table row's own cluster), with fresh recorders.
  void reset(const json& cluster) {
    fake_ = std::make_shared<gpuscale::testing::FakeKubeClient>();
    client_ = std::make_shared<RecordingClient>(fake_);
    events_ = std::make_shared<MemoryEventRecorder>();
    testing::seed(*fake_, cluster);
  }

  PassResult pass(Controller& c, TimePoint at) { return c.pass(objectsOf(*fake_), at); }

  json node(const std::string& name) { return *fake_->get(nodeRef(name)); }
  std::optional<HpaRecord> record() { return testing::recordOf(*fake_, "default", "triton"); }
  static std::string stateName() { return StateStoreOptions{}.name; }
  json hpa() { return *fake_->get(hpaRef()); }
  int maxReplicas() { return hpa()["spec"].value("maxReplicas", 0); }

  // What mig-manager and the device plugin do: labels and allocatable.
  void setNode(const std::string& name, json labels, json allocatable = json::object()) {
    json patch{{"metadata", {{"labels", labels}}}};
    if (!allocatable.empty()) patch["status"] = {{"allocatable", allocatable}};
    ASSERT_TRUE(fake_->patch(nodeRef(name), kube::PatchType::kMerge, patch).ok());
  }

  // A KubeActuator of its own that applies one plan, lowering triton's ceiling 7 -> 3, against the
  // objects as they are when it is built and a state store of its own.
  struct LoweringActuator {
    explicit LoweringActuator(ActuatorTest& t)
        : actuator(t.client_, t.events_, std::make_shared<NodeLevelGpuPodMapping>(), t.options_),
          snapshot(partition::buildSnapshot(json(objectsOf(*t.fake_)))),
          store(t.client_, {}) {
      plan.actions.push_back(partition::SetMaxReplicas{"default", "triton", 7, 3});
      if (snapshot.ok()) state.snapshot = &*snapshot;
      state.store = &store;
    }
    void apply(TimePoint at) { actuator.apply(plan, state, at); }

    KubeActuator actuator;
    partition::Plan plan;
    core::Result<partition::ClusterSnapshot> snapshot;
    HpaStateStore store;
    ClusterState state;
  };

  static bool flips(const Write& w, const std::string& node, std::string_view label) {
    return w.resource == "nodes" && w.name == node && w.body.contains("metadata") &&
           w.body["metadata"].contains("labels") &&
           w.body["metadata"]["labels"].contains(std::string(label));
  }

  std::shared_ptr<gpuscale::testing::FakeKubeClient> fake_ =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  std::shared_ptr<RecordingClient> client_ = std::make_shared<RecordingClient>(fake_);
  std::shared_ptr<MemoryEventRecorder> events_ = std::make_shared<MemoryEventRecorder>();
  ActuatorOptions options_;
  TimePoint t0_ = *core::parseRfc3339("2026-11-22T01:00:00Z");
};

}  // namespace gpuscale::reconciler::testing
