// FencedKubeClient: writes are refused once the fence closes, reads pass; and end to end, a leader
// whose lease ran out (its clock passed the renew deadline, a successor took the Lease) sends no
// write at all, Events included.
#include "gpuscale/reconciler/fenced_client.h"
#include "gpuscale/core/rfc3339.h"

#include <gtest/gtest.h>

#include <functional>

#include "cluster_fixture.h"
#include "gpuscale/reconciler/controller.h"
#include "gpuscale/reconciler/leader_election.h"

namespace gpuscale::reconciler {
namespace fenced_client_test {

using nlohmann::json;
using testing::RecordingClient;
using namespace std::chrono_literals;
using Clock = LeaderElector::Clock;

kube::ResourceRef configMaps() {
  return kube::ResourceRef::collection("", "v1", "configmaps", "default");
}

TEST(FencedKubeClientTest, ClosedFenceRefusesEveryWriteAndLetsReadsThrough) {
  struct Row {
    const char* what;
    std::function<core::Status(kube::KubeClient&)> call;
    bool write;
  };
  const json cm{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "x"}}}};
  const std::vector<Row> rows{
      {"create", [&](kube::KubeClient& c) { return c.create(configMaps(), cm).status(); }, true},
      {"update",
       [&](kube::KubeClient& c) { return c.update(configMaps().named("x"), cm).status(); }, true},
      {"patch",
       [&](kube::KubeClient& c) {
         return c.patch(configMaps().named("x"), kube::PatchType::kMerge, {{"data", {{"a", "b"}}}})
             .status();
       },
       true},
      {"remove", [&](kube::KubeClient& c) { return c.remove(configMaps().named("x")); }, true},
      {"get", [&](kube::KubeClient& c) { return c.get(configMaps().named("x")).status(); }, false},
      {"list", [&](kube::KubeClient& c) { return c.list(configMaps(), {}).status(); }, false},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
    ASSERT_TRUE(fake->create(configMaps(), cm).ok());
    auto recording = std::make_shared<RecordingClient>(fake);
    bool open = false;
    FencedKubeClient fenced(recording, [&] { return open; });
    const core::Status closedAnswer = row.call(fenced);
    EXPECT_EQ(isNotLeader(closedAnswer), row.write) << closedAnswer.toString();
    EXPECT_TRUE(recording->writes().empty()) << "nothing reached the API server";
    EXPECT_EQ(fenced.refused(), row.write ? 1 : 0);
    open = true;
    EXPECT_FALSE(isNotLeader(row.call(fenced)));
  }
}

// The scenario the fence exists for: the leader's process stalls past its renew deadline without
// noticing, another replica takes the Lease, and the old leader then runs a pass that would
// otherwise flip labels and raise maxReplicas.
TEST(FencedKubeClientTest, LeaderPastItsRenewDeadlineMakesNoWriteAfterTakeover) {
  auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
  testing::seed(*fake, partition::testing::loadDump("a100_idle_reshape.json"));
  const Clock::time_point t0 = Clock::time_point{} + 1000s;
  Clock::time_point clock = t0;  // this test's only thread reads and moves it
  auto candidate = [&](const std::string& id) {
    LeaderElectionOptions o;
    o.identity = id;
    o.leaseDuration = 15s;
    o.renewDeadline = 10s;
    o.now = [&clock] { return clock; };
    return std::make_unique<LeaderElector>(fake, o);  // the Lease has a client of its own
  };
  auto a = candidate("a");
  auto b = candidate("b");

  auto recording = std::make_shared<RecordingClient>(fake);
  auto fenced = std::make_shared<FencedKubeClient>(recording, [&] { return a->isLeader(); });
  auto events = std::make_shared<KubeEventRecorder>(fenced, "a");
  ActuatorOptions options;
  options.maxNodesInFlight = 2;
  auto actuator = std::make_shared<KubeActuator>(
      fenced, events, std::make_shared<NodeLevelGpuPodMapping>(), options);
  Controller controller(
      fenced, actuator, testing::seedPolicies(), events,
      std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>()), {});
  const TimePoint wall = *core::parseRfc3339("2026-11-22T01:00:00Z");

  ASSERT_TRUE(a->tryAcquireOrRenew(clock));
  EXPECT_FALSE(b->tryAcquireOrRenew(clock + 1s));
  controller.pass(testing::objectsOf(*fake), wall);
  ASSERT_FALSE(recording->writes().empty()) << "the leader acted";
  EXPECT_EQ(fenced->refused(), 0);

  // a's renew loop stalls; its own clock passes the renew deadline: no longer leader, though
  // nothing told it so.
  clock = t0 + 9s;
  EXPECT_TRUE(a->isLeader());
  clock = t0 + 10s;
  EXPECT_FALSE(a->isLeader());
  // b saw the record last change at t0+1s; 15 s later it takes over.
  clock = t0 + 17s;
  ASSERT_TRUE(b->tryAcquireOrRenew(clock));

  // mig-manager and the device plugin answer, so a pass has writes to make (labels, outcomes,
  // maxReplicas, Events).
  for (const char* name : {"a100-node-3", "a100-node-1"}) {
    ASSERT_TRUE(
        fake->patch(kube::ResourceRef::collection("", "v1", "nodes").named(name),
                    kube::PatchType::kMerge,
                    {{"metadata", {{"labels", {{"nvidia.com/mig.config.state", "success"}}}}},
                     {"status", {{"allocatable", {{"nvidia.com/mig-1g.5gb", "14"}}}}}})
            .ok());
  }
  const std::size_t before = recording->writes().size();
  controller.pass(testing::objectsOf(*fake), wall + 17s);
  EXPECT_EQ(recording->writes().size(), before) << "the old leader wrote after losing the lease";
  EXPECT_GT(fenced->refused(), 0);
  // When a's loop resumes it finds b in the Lease and stays a follower.
  EXPECT_FALSE(a->tryAcquireOrRenew(clock + 1s));
  EXPECT_FALSE(a->isLeader());
  EXPECT_TRUE(b->isLeader());
}

}  // namespace fenced_client_test
}  // namespace gpuscale::reconciler
