// Observe mode: ObservingKubeClient sends no write and answers as the API server would have;
// ObservingActuator takes no action and records each new one as a WouldAct Event; and end to end,
// a controller in observe mode over a cluster whose plan reshapes nodes and raises an HPA writes
// nothing but Events.
#include "gpuscale/reconciler/observe_mode.h"

#include <gtest/gtest.h>

#include <functional>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/reconciler/controller.h"

namespace gpuscale::reconciler {
namespace observe_mode_test {

using nlohmann::json;
using testing::RecordingClient;
using namespace std::chrono_literals;

kube::ResourceRef configMaps() {
  return kube::ResourceRef::collection("", "v1", "configmaps", "default");
}

std::shared_ptr<ReconcilerMetrics> newMetrics() {
  return std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>());
}

double counterSum(const ReconcilerMetrics& metrics, const std::string& family) {
  double sum = 0;
  for (const auto& f : metrics.registry()->Collect()) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) sum += m.counter.value;
  }
  return sum;
}

TEST(ObservingKubeClientTest, WithholdsEveryWriteAnswersAsTheServerWouldAndLetsReadsThrough) {
  const json cm{{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata", {{"name", "x"}}},
                {"data", {{"a", "1"}}}};
  struct Row {
    const char* what;
    std::function<core::Result<json>(kube::KubeClient&)> call;
    bool write;
    json want;  // the answer's data (null: not checked)
  };
  const std::vector<Row> rows{
      {"create",
       [&](kube::KubeClient& c) {
         json other = cm;
         other["metadata"]["name"] = "y";
         return c.create(configMaps(), other);
       },
       true,
       {{"a", "1"}}},
      {"update",
       [&](kube::KubeClient& c) {
         json changed = cm;
         changed["data"]["a"] = "2";
         return c.update(configMaps().named("x"), changed);
       },
       true,
       {{"a", "2"}}},
      {"merge patch applied to the object as read",
       [&](kube::KubeClient& c) {
         return c.patch(configMaps().named("x"), kube::PatchType::kMerge,
                        {{"metadata", {{"resourceVersion", "1"}}}, {"data", {{"b", "2"}}}});
       },
       true,
       {{"a", "1"}, {"b", "2"}}},
      {"JSON patch",
       [&](kube::KubeClient& c) {
         return c.patch(configMaps().named("x"), kube::PatchType::kJson,
                        json::array({{{"op", "remove"}, {"path", "/data/a"}}}));
       },
       true, json::object()},
      {"delete",
       [&](kube::KubeClient& c) -> core::Result<json> {
         auto s = c.remove(configMaps().named("x"));
         if (!s.ok()) return s;
         return json{{"data", json::object()}};
       },
       true, nullptr},
      {"get",
       [&](kube::KubeClient& c) { return c.get(configMaps().named("x")); },
       false,
       {{"a", "1"}}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
    ASSERT_TRUE(fake->create(configMaps(), cm).ok());
    auto recording = std::make_shared<RecordingClient>(fake);
    auto metrics = newMetrics();
    ObservingKubeClient observing(recording, metrics);
    auto answer = row.call(observing);
    ASSERT_TRUE(answer.ok()) << answer.status().toString();
    if (!row.want.is_null()) {
      EXPECT_EQ(answer->value("data", json::object()), row.want);
    }
    EXPECT_TRUE(recording->writes().empty()) << "nothing reached the API server";
    EXPECT_EQ(observing.withheld(), row.write ? 1 : 0);
    EXPECT_EQ(counterSum(*metrics, "gpuscale_reconciler_would_be_writes_total"), row.write ? 1 : 0);
    auto stored = fake->get(configMaps().named("x"));
    ASSERT_TRUE(stored.ok()) << "the object is still there";
    EXPECT_EQ((*stored)["data"], json({{"a", "1"}})) << "and unchanged";
  }
}

TEST(ObservingKubeClientTest, PatchOfAMissingObjectIsTheReadError) {
  auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
  ObservingKubeClient observing(fake, nullptr);
  auto answer =
      observing.patch(configMaps().named("gone"), kube::PatchType::kMerge, json::object());
  EXPECT_EQ(answer.status().httpCode(), 404);
}

TEST(ObservingActuatorTest, RecordsEachNewActionOnceAndTakesNone) {
  auto events = std::make_shared<MemoryEventRecorder>();
  auto metrics = newMetrics();
  ObservingActuator actuator(events, metrics);
  partition::Plan plan;
  partition::TimeSlicingChange ts;
  ts.node = "node-1";
  ts.resource = "nvidia.com/gpu";
  ts.from = 1;
  ts.replicas = 4;
  plan.actions.push_back(ts);
  plan.actions.push_back(partition::SetMaxReplicas{"team-a", "triton", 2, 6});
  const ClusterState state;
  const TimePoint now{};

  struct Step {
    const char* what;
    bool withRaise;
    int newEvents;
  };
  const std::vector<Step> steps{
      {"first plan: both actions are news", true, 2},
      {"the same plan again: nothing new", true, 0},
      {"the raise left the plan", false, 0},
      {"and came back: news again", true, 1},
  };
  std::size_t seen = 0;
  for (const auto& step : steps) {
    SCOPED_TRACE(step.what);
    partition::Plan p = plan;
    if (!step.withRaise) p.actions.pop_back();
    const ActuationReport report = actuator.apply(p, state, now);
    EXPECT_TRUE(report.outcomes.empty());
    EXPECT_EQ(report.nodesInFlight, 0);
    const auto all = events->withReason("WouldAct");
    EXPECT_EQ(all.size() - seen, static_cast<std::size_t>(step.newEvents));
    seen = all.size();
  }
  const auto all = events->withReason("WouldAct");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].target.kind, "Node");
  EXPECT_EQ(all[0].target.name, "node-1");
  EXPECT_EQ(all[1].target.kind, "HorizontalPodAutoscaler");
  EXPECT_NE(all[1].message.find("would set maxReplicas of HPA team-a/triton: 2 -> 6"),
            std::string::npos)
      << all[1].message;
  EXPECT_EQ(counterSum(*metrics, "gpuscale_reconciler_would_act_total"), 3);
}

TEST(ObserveModeTest, ParsesTheModeFlag) {
  EXPECT_EQ(parseRunMode("act"), RunMode::kAct);
  EXPECT_EQ(parseRunMode("observe"), RunMode::kObserve);
  EXPECT_EQ(parseRunMode("Observe"), std::nullopt);
  EXPECT_EQ(parseRunMode(""), std::nullopt);
  EXPECT_EQ(runModeName(RunMode::kObserve), "observe");
}

// The seed dump's plan reshapes MIG on two nodes and raises the Triton HPA: in observe mode the
// passes write nothing but Events, and the Events say what would have been done.
TEST(ObserveModeTest, ControllerInObserveModeWritesOnlyEvents) {
  auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
  testing::seed(*fake, partition::testing::loadDump("a100_idle_reshape.json"));
  auto recording = std::make_shared<RecordingClient>(fake);
  auto metrics = newMetrics();
  auto events = std::make_shared<KubeEventRecorder>(recording, "observer");
  auto observing = std::make_shared<ObservingKubeClient>(recording, metrics);
  auto actuator = std::make_shared<ObservingActuator>(events, metrics);
  ControllerOptions options;
  options.observe = true;
  Controller controller(observing, actuator, testing::seedPolicies(), events, metrics, options);
  const TimePoint wall = *core::parseRfc3339("2026-11-22T01:00:00Z");
  for (int i = 0; i < 3; ++i) {
    auto r = controller.pass(testing::objectsOf(*fake), wall + i * 30s);
    ASSERT_TRUE(r.planned) << r.error;
    ASSERT_FALSE(r.plan.actions.empty()) << "the seed's plan acts";
  }
  for (const auto& w : recording->writes()) {
    EXPECT_EQ(w.resource, "events") << w.verb << " " << w.resource << "/" << w.name;
  }
  EXPECT_EQ(observing->withheld(), 0) << "the controller itself does not try to write";
  const auto would = recording->countWhere([](const testing::Write& w) {
    return w.resource == "events" && w.verb == "create" && w.body.value("reason", "") == "WouldAct";
  });
  EXPECT_GE(would, 2) << "a node and the HPA";
  EXPECT_EQ(counterSum(*metrics, "gpuscale_reconciler_actions_total"), 0);
  EXPECT_GT(counterSum(*metrics, "gpuscale_reconciler_would_act_total"), 0);
}

}  // namespace observe_mode_test
}  // namespace gpuscale::reconciler
