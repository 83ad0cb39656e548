// GPUCapacityRequests live: the status patch (pure), and a grant through the controller's acting
// pass: status.grantedReplicas written through the status subresource, the Granted condition,
// Events on the request, and nothing written in a steady state.
#include "gpuscale/reconciler/request_status.h"

#include <gtest/gtest.h>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/reconciler/controller.h"

namespace gpuscale::reconciler {
namespace request_status_test {

using nlohmann::json;

const TimePoint kNow = *core::parseRfc3339("2026-11-22T01:00:00Z");
const char* kEarlier = "2026-11-21T00:00:00Z";

partition::CapacityRequestVerdict verdict(int granted, const char* status, const char* reason,
                                          const char* message) {
  return {granted, {"Granted", status, reason, message}};
}

json requestWith(const json& status) {
  json r = {{"metadata", {{"name", "r"}, {"namespace", "a"}, {"uid", "u"}, {"generation", 2}}},
            {"spec", {{"resource", "nvidia.com/gpu"}, {"replicas", 2}}}};
  if (!status.is_null()) r["status"] = status;
  return r;
}

json grantedCondition(const char* status, const char* reason, const char* message) {
  return {{"type", "Granted"},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", kEarlier},
          {"observedGeneration", 2}};
}

TEST(RequestStatusTest, PatchOnlyWhatChanged) {
  const json other = {{"type", "Ready"}, {"status", "True"}};
  struct Row {
    const char* what;
    json status;  // null: none
    partition::CapacityRequestVerdict verdict;
    bool writeGranted;
    bool patched;
    std::string since;  // lastTransitionTime written ("" = now)
  };
  const std::vector<Row> rows{
      {"no status yet", nullptr, verdict(2, "True", "Granted", "2 of 2"), false, true, ""},
      {"says it already",
       {{"observedGeneration", 2},
        {"grantedReplicas", 2},
        {"conditions", json::array({grantedCondition("True", "Granted", "2 of 2")})}},
       verdict(2, "True", "Granted", "2 of 2"),
       true,
       false,
       ""},
      {"an older generation observed",
       {{"observedGeneration", 1},
        {"conditions", json::array({grantedCondition("True", "Granted", "2 of 2")})}},
       verdict(2, "True", "Granted", "2 of 2"),
       false,
       true,
       kEarlier},
      {"another message, same status: the transition time stays",
       {{"observedGeneration", 2},
        {"conditions",
         json::array({other, grantedCondition("False", "PartiallyGranted", "1 of 2")})}},
       verdict(1, "False", "WaitingForReshape", "1 of 2; reshaping"),
       false,
       true,
       kEarlier},
      {"the status flips: a new transition time",
       {{"observedGeneration", 2},
        {"conditions", json::array({grantedCondition("False", "PartiallyGranted", "1 of 2")})}},
       verdict(2, "True", "Granted", "2 of 2"),
       false,
       true,
       ""},
      {"grantedReplicas differs (a malformed request answered)",
       {{"observedGeneration", 2},
        {"grantedReplicas", 3},
        {"conditions", json::array({grantedCondition("False", "Invalid", "bad")})}},
       verdict(0, "False", "Invalid", "bad"),
       true,
       true,
       kEarlier},
      {"a status of the wrong shape", "oops", verdict(0, "False", "Invalid", "bad"), true, true,
       ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto patch = requestStatusPatch(requestWith(row.status), row.verdict, row.writeGranted, kNow);
    ASSERT_EQ(patch.has_value(), row.patched) << (patch ? patch->dump() : "");
    if (!patch) continue;
    const json& status = (*patch)["status"];
    EXPECT_EQ(status["observedGeneration"], 2);
    EXPECT_EQ(status.contains("grantedReplicas"), row.writeGranted);
    if (row.writeGranted) {
      EXPECT_EQ(status["grantedReplicas"], row.verdict.granted);
    }
    const json& conditions = status["conditions"];
    const json& granted = conditions.back();
    EXPECT_EQ(granted["reason"], row.verdict.condition.reason);
    EXPECT_EQ(granted["message"], row.verdict.condition.message);
    EXPECT_EQ(granted["lastTransitionTime"],
              row.since.empty() ? core::formatRfc3339(kNow) : row.since);
    // Other conditions are kept: a merge patch replaces the whole list.
    const bool hadOther = row.status.is_object() && row.status.contains("conditions") &&
                          row.status["conditions"].front() == other;
    EXPECT_EQ(conditions.size(), hadOther ? 2u : 1u);
  }
}

TEST(RequestStatusTest, ARequestThePlannerNeverSeesSaysWhy) {
  struct Row {
    const char* why;
    const char* reason;
    const char* message;
  };
  const std::vector<Row> rows{
      {"NotManaged: no policy manages it", "NotManaged", "no policy manages it"},
      {"TargetNotFound: its scale target Deployment x is not in the cluster state",
       "TargetNotFound", "its scale target Deployment x is not in the cluster state"},
      {"NoGpuRequest: the pods of Deployment x request no nvidia.com/ resource", "NoGpuRequest",
       "the pods of Deployment x request no nvidia.com/ resource"},
      {"no code: just text", "NotManaged", "no code: just text"},
      {": empty code", "NotManaged", ": empty code"},
      {"", "NotManaged", ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.why);
    const auto v = unplannedRequestVerdict(3, row.why);
    EXPECT_EQ(v.granted, 3) << "what the status says is kept";
    EXPECT_EQ(v.condition.type, "Granted");
    EXPECT_EQ(v.condition.status, "False");
    EXPECT_EQ(v.condition.reason, row.reason);
    EXPECT_EQ(v.condition.message, row.message);
  }
}

const kube::ResourceRef kRequests =
    kube::ResourceRef::collection("gpuscale.io", "v1alpha1", "gpucapacityrequests", "default");

json request(const std::string& name, const std::string& resource, int replicas) {
  return {{"apiVersion", "gpuscale.io/v1alpha1"},
          {"kind", "GPUCapacityRequest"},
          {"metadata",
           {{"name", name},
            {"namespace", "default"},
            {"uid", "uid-" + name},
            {"generation", 1},
            {"annotations", {{"gpuscale.io/partition-policy", "default"}}}}},
          {"spec", {{"resource", resource}, {"replicas", replicas}}}};
}

struct Acting {
  std::shared_ptr<gpuscale::testing::FakeKubeClient> fake =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  std::shared_ptr<MemoryEventRecorder> events = std::make_shared<MemoryEventRecorder>();
  std::unique_ptr<Controller> controller;

  Acting() {
    testing::seed(*fake, partition::testing::loadDump("a100_idle_reshape.json"));
    // Without the seed's HPA: nothing else wants the idle node's partitions.
    EXPECT_TRUE(fake->remove(testing::tritonHpaRef()).ok());
    auto actuator = std::make_shared<KubeActuator>(
        fake, events, std::make_shared<NodeLevelGpuPodMapping>(), ActuatorOptions{});
    controller = std::make_unique<Controller>(
        fake, actuator, testing::seedPolicies(), events,
        std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>()),
        ControllerOptions{});
  }
  PassResult pass(TimePoint now) {
    auto r = controller->pass(testing::objectsOf(*fake), now);
    EXPECT_TRUE(r.error.empty()) << r.error;
    return r;
  }
  json get(const std::string& name) { return *fake->get(kRequests.named(name)); }
  std::string version(const std::string& name) {
    return get(name)["metadata"]["resourceVersion"].get<std::string>();
  }
};

// A request for partitions that are free is granted in one pass: status.grantedReplicas, Granted
// True with observedGeneration, an Event on the request; the next pass writes nothing.
TEST(RequestStatusTest, AFreeRequestIsGrantedThroughItsStatusOnce) {
  Acting a;
  ASSERT_TRUE(a.fake->create(kRequests, request("planner", "nvidia.com/mig-3g.20gb", 2)).ok());
  a.pass(kNow);
  a.pass(kNow + std::chrono::seconds(1));  // the condition follows the written grant
  json r = a.get("planner");
  EXPECT_EQ(r["status"]["grantedReplicas"], 2) << r.dump(2);
  EXPECT_EQ(r["status"]["observedGeneration"], 1);
  ASSERT_EQ(r["status"]["conditions"].size(), 1u);
  EXPECT_EQ(r["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(r["status"]["conditions"][0]["reason"], "Granted");
  // No HPA named after the request was ever read or written.
  EXPECT_FALSE(a.fake->get(testing::tritonHpaRef().named("GPUCapacityRequest.planner")).ok());
  auto granted = a.events->withReason("Granted");
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].target.kind, "GPUCapacityRequest");
  EXPECT_EQ(granted[0].target.name, "planner");
  const std::string version = a.version("planner");
  a.pass(kNow + std::chrono::seconds(2));
  EXPECT_EQ(a.version("planner"), version) << "a steady state writes nothing";
  EXPECT_EQ(a.events->withReason("Granted").size(), 1u);

  // Asking for less gives the rest back: grantedReplicas follows down.
  ASSERT_TRUE(a.fake
                  ->patch(kRequests.named("planner"), kube::PatchType::kMerge,
                          {{"spec", {{"replicas", 1}}}, {"metadata", {{"generation", 2}}}})
                  .ok());
  a.pass(kNow + std::chrono::hours(1));
  a.pass(kNow + std::chrono::hours(1) + std::chrono::seconds(1));
  r = a.get("planner");
  EXPECT_EQ(r["status"]["grantedReplicas"], 1) << r.dump(2);
  EXPECT_EQ(r["status"]["observedGeneration"], 2);
}

// A request that does not read is answered: Granted False, reason Invalid, nothing granted.
TEST(RequestStatusTest, AMalformedRequestIsAnsweredInvalid) {
  Acting a;
  json bad = request("bad", "nvidia.com/gpu", 1);
  bad["spec"]["workloadRef"] = {{"kind", "Deployment"}, {"name", "triton"}};
  ASSERT_TRUE(a.fake->create(kRequests, bad).ok());
  a.pass(kNow);
  json r = a.get("bad");
  EXPECT_EQ(r["status"]["grantedReplicas"], 0) << r.dump(2);
  EXPECT_EQ(r["status"]["conditions"][0]["reason"], "Invalid");
  const std::string version = a.version("bad");
  a.pass(kNow + std::chrono::seconds(1));
  EXPECT_EQ(a.version("bad"), version);
  ASSERT_EQ(a.events->withReason("Blocked").size(), 1u);
}

// A request the planner never sees is told why, once: no policy manages it (Granted False,
// NotManaged), or its workload is not there (TargetNotFound); grantedReplicas is left as it is, a
// Blocked Event names the reason, and a steady state writes nothing. Once a policy manages it,
// it is planned and granted.
TEST(RequestStatusTest, ARequestNoPolicyManagesIsAnsweredNotManaged) {
  Acting a;
  json stray = request("stray", "nvidia.com/mig-3g.20gb", 1);
  stray["metadata"].erase("annotations");
  json missing = request("missing", "nvidia.com/gpu", 1);
  missing["spec"].erase("resource");
  missing["spec"]["workloadRef"] = {
      {"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "nowhere"}};
  ASSERT_TRUE(a.fake->create(kRequests, stray).ok());
  ASSERT_TRUE(a.fake->create(kRequests, missing).ok());
  a.pass(kNow);
  json r = a.get("stray");
  ASSERT_EQ(r["status"]["conditions"].size(), 1u) << r.dump(2);
  EXPECT_EQ(r["status"]["conditions"][0]["status"], "False");
  EXPECT_EQ(r["status"]["conditions"][0]["reason"], "NotManaged");
  EXPECT_NE(r["status"]["conditions"][0]["message"].get<std::string>().find("no policy manages"),
            std::string::npos);
  EXPECT_EQ(r["status"]["observedGeneration"], 1);
  EXPECT_FALSE(r["status"].contains("grantedReplicas")) << "nothing is held or written for it";
  r = a.get("missing");
  EXPECT_EQ(r["status"]["conditions"][0]["reason"], "TargetNotFound") << r.dump(2);
  ASSERT_EQ(a.events->withReason("Blocked").size(), 2u);
  const std::string version = a.version("stray");
  a.pass(kNow + std::chrono::seconds(1));
  EXPECT_EQ(a.version("stray"), version) << "a steady state writes nothing";
  EXPECT_EQ(a.events->withReason("Blocked").size(), 2u);

  // Annotated for the policy: planned and granted like any other request.
  ASSERT_TRUE(
      a.fake
          ->patch(kRequests.named("stray"), kube::PatchType::kMerge,
                  {{"metadata", {{"annotations", {{"gpuscale.io/partition-policy", "default"}}}}}})
          .ok());
  a.pass(kNow + std::chrono::seconds(2));
  a.pass(kNow + std::chrono::seconds(3));
  r = a.get("stray");
  EXPECT_EQ(r["status"]["grantedReplicas"], 1) << r.dump(2);
  EXPECT_EQ(r["status"]["conditions"][0]["reason"], "Granted");
}

}  // namespace request_status_test
}  // namespace gpuscale::reconciler
