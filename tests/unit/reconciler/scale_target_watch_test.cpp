// The live side of workloads scaled through /scale: discovery per kind, an informer per kind the
// HPAs name (stopped when none does), Scales read when a workload changes and never otherwise, and
// HPAs whose target kind cannot be read skipped with a reason; the controller plans them.
#include "gpuscale/reconciler/scale_target_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/reconciler/controller.h"
#include "gpuscale/reconciler/hpa_explain.h"
#include "support/wait_until.h"

namespace gpuscale::reconciler {
namespace scale_target_watch_test {

using namespace std::chrono_literals;
using nlohmann::json;

const TimePoint kNow = *core::parseRfc3339("2026-11-22T01:00:00Z");
// How long the informers may take to sync under load (sanitizers, a parallel ctest on 2 cores): a
// bound that only a hang reaches.
constexpr std::chrono::seconds kPatience{60};
// LeaderWorkerSet's API, as discovery lists it.
const std::string kDiscoveryPath = "/apis/leaderworkerset.x-k8s.io/v1";
constexpr std::string_view kGroup = "leaderworkerset.x-k8s.io";
constexpr const char* kApiVersion = "leaderworkerset.x-k8s.io/v1";

json resourceList(bool scale, bool namespaced = true) {
  json resources = json::array({{{"name", "leaderworkersets"},
                                 {"singularName", "leaderworkerset"},
                                 {"namespaced", namespaced},
                                 {"kind", "LeaderWorkerSet"}},
                                {{"name", "leaderworkersets/status"},
                                 {"namespaced", namespaced},
                                 {"kind", "LeaderWorkerSet"}}});
  if (scale) {
    resources.push_back({{"name", "leaderworkersets/scale"},
                         {"namespaced", namespaced},
                         {"group", "autoscaling"},
                         {"version", "v1"},
                         {"kind", "Scale"}});
  }
  return {{"kind", "APIResourceList"}, {"groupVersion", kApiVersion}, {"resources", resources}};
}

kube::ResourceRef lwsRef(const std::string& ns = "default") {
  return kube::ResourceRef::collection(kGroup, "v1", "leaderworkersets", ns);
}

// Serves GET <resource>/<name>/scale from the stored workload, as kube-apiserver does for a CRD
// whose scale subresource reads .spec.replicas, .status.replicas and .status.hpaPodSelector; counts
// those GETs.
class ScaleServingClient final : public kube::ForwardingKubeClient {
 public:
  using ForwardingKubeClient::ForwardingKubeClient;
  core::Result<kube::Object> get(const kube::ResourceRef& ref) override {
    if (ref.subresource != "scale") return inner().get(ref);
    ++scaleGets;
    kube::ResourceRef parent = ref;
    parent.subresource.clear();
    auto w = inner().get(parent);
    if (!w) return w.status();
    const json& meta = (*w)["metadata"];
    json status = w->value("status", json::object());
    return json{{"apiVersion", "autoscaling/v1"},
                {"kind", "Scale"},
                {"metadata",
                 {{"name", meta["name"]},
                  {"namespace", meta["namespace"]},
                  {"uid", meta.value("uid", "")},
                  {"resourceVersion", meta.value("resourceVersion", "")}}},
                {"spec", {{"replicas", (*w)["spec"].value("replicas", 1)}}},
                {"status",
                 {{"replicas", status.value("replicas", 0)},
                  {"selector", status.value("hpaPodSelector", "")}}}};
  }
  std::atomic<int> scaleGets{0};
};

json leaderWorkerSet(const std::string& name, int replicas, int size) {
  json podSpec{
      {"spec",
       {{"containers", json::array({partition::testing::container("nvidia.com/mig-1g.5gb", 1)})}}}};
  return {{"apiVersion", kApiVersion},
          {"kind", "LeaderWorkerSet"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
          {"spec",
           {{"replicas", replicas},
            {"leaderWorkerTemplate", {{"size", size}, {"workerTemplate", podSpec}}}}},
          {"status",
           {{"replicas", replicas},
            {"hpaPodSelector", "leaderworkerset.sigs.k8s.io/name=" + name +
                                   ",leaderworkerset.sigs.k8s.io/worker-index=0"}}}};
}

json hpaOn(const std::string& name, const std::string& apiVersion, const std::string& kind,
           int max = 2) {
  json h = partition::testing::hpa(
      "default", name, partition::testing::hpaSpec(1, max, max, max + 1, "150", "50", true));
  h["metadata"]["uid"] = "hpa-" + name;
  h["spec"]["scaleTargetRef"] = {{"apiVersion", apiVersion}, {"kind", kind}, {"name", name}};
  return h;
}

std::vector<kube::ObjectStore::Ptr> ptrs(const std::vector<json>& objects) {
  std::vector<kube::ObjectStore::Ptr> out;
  for (const auto& o : objects) out.push_back(std::make_shared<const json>(o));
  return out;
}

// Calls update() until `done` or a deadline (the informers list and watch on their own threads).
template <typename Done>
bool updateUntil(ScaleTargetWatch& watch, const std::vector<json>& hpas, Done&& done) {
  return gpuscale::testing::waitUntil(
      [&] {
        watch.update(ptrs(hpas), kNow);
        return done();
      },
      kPatience);
}

std::vector<std::string> collected(const ScaleTargetWatch& watch) {
  std::vector<partition::KubeItem> items;
  std::vector<kube::ObjectStore::Ptr> held;
  watch.collect(items, held);
  std::vector<std::string> out;
  for (const auto& i : items) {
    out.push_back(std::string(i.kind) + "/" + (*i.object)["metadata"].value("name", "") + "=" +
                  std::to_string((*i.object)["spec"].value("replicas", -1)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Cluster {
  std::shared_ptr<gpuscale::testing::FakeKubeClient> fake =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  std::shared_ptr<ScaleServingClient> client = std::make_shared<ScaleServingClient>(fake);
};

TEST(ScaleTargetWatchTest, DiscoveryFindsTheResourceAndItsScaleSubresource) {
  struct Row {
    const char* what;
    std::string apiVersion, kind;
    std::optional<json> document;  // served at /apis/leaderworkerset.x-k8s.io/v1
    std::string want;              // resource, or the error's HTTP code
  };
  const std::vector<Row> rows{
      {"served with /scale", kApiVersion, "LeaderWorkerSet", resourceList(true),
       "leaderworkersets"},
      {"the group/version is not served", kApiVersion, "LeaderWorkerSet", std::nullopt, "404"},
      {"the kind is not in it", kApiVersion, "Other", resourceList(true), "404"},
      {"no /scale subresource", kApiVersion, "LeaderWorkerSet", resourceList(false), "422"},
      {"cluster-scoped", kApiVersion, "LeaderWorkerSet", resourceList(true, false), "422"},
      {"a core apiVersion that is not v1", "v2", "Pod", std::nullopt, "404"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    gpuscale::testing::FakeKubeClient fake;
    if (row.document) fake.setPath(kDiscoveryPath, *row.document);
    auto r = resolveScalableKind(fake, row.apiVersion, row.kind);
    EXPECT_EQ(r ? r->resource : std::to_string(r.status().httpCode()), row.want)
        << (r ? "" : r.status().message());
  }
  gpuscale::testing::FakeKubeClient fake;
  fake.failNext("getPath", core::Status::unavailable("connection refused"));
  auto r = resolveScalableKind(fake, kApiVersion, "LeaderWorkerSet");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().httpCode(), 503) << "a transport failure is neither 404 nor 422";
}

TEST(ScaleTargetWatchTest, ScalesAreReadWhenAWorkloadChangesAndNeverInSteadyState) {
  Cluster c;
  c.fake->setPath(kDiscoveryPath, resourceList(true));
  ASSERT_TRUE(c.fake->create(lwsRef(), leaderWorkerSet("big", 1, 2)).ok());
  ASSERT_TRUE(c.fake->create(lwsRef(), leaderWorkerSet("other", 3, 4)).ok());
  std::atomic<int> changes{0};
  ScaleTargetWatchOptions options;
  options.ownKinds = {"apps/Deployment"};
  ScaleTargetWatch watch(c.client, options, [&] { ++changes; });
  // Deployments are the controller's own, also named without an apiVersion.
  const std::vector<json> hpas{hpaOn("big", kApiVersion, "LeaderWorkerSet"),
                               hpaOn("web", "apps/v1", "Deployment"),
                               hpaOn("old", "", "Deployment")};

  ASSERT_TRUE(updateUntil(watch, hpas, [&] { return collected(watch).size() == 4; }));
  EXPECT_EQ(collected(watch),
            (std::vector<std::string>{"LeaderWorkerSet/big=1", "LeaderWorkerSet/other=3",
                                      "Scale/big=1", "Scale/other=3"}));
  EXPECT_EQ(watch.stats().informers, 1) << "Deployments are the controller's own";
  EXPECT_EQ(watch.stats().discoveries, 1u);
  EXPECT_TRUE(watch.skipped().empty());
  EXPECT_GT(changes.load(), 0) << "the informer's events wake the controller";

  // Steady state: passes read nothing more.
  const int gets = c.client->scaleGets.load();
  const int lists = c.fake->calls("list");
  for (int i = 0; i < 5; ++i) watch.update(ptrs(hpas), kNow);
  EXPECT_EQ(c.client->scaleGets.load(), gets);
  EXPECT_EQ(c.fake->calls("list"), lists);
  EXPECT_EQ(watch.stats().discoveries, 1u);

  // One workload changes: its Scale, and only its, is read again.
  ASSERT_TRUE(
      c.fake->patch(lwsRef().named("big"), kube::PatchType::kMerge, {{"spec", {{"replicas", 2}}}})
          .ok());
  ASSERT_TRUE(updateUntil(watch, hpas, [&] {
    return collected(watch) == std::vector<std::string>{"LeaderWorkerSet/big=2",
                                                        "LeaderWorkerSet/other=3", "Scale/big=2",
                                                        "Scale/other=3"};
  }));
  EXPECT_EQ(c.client->scaleGets.load(), gets + 1);

  // Deleted: the workload and its Scale go.
  ASSERT_TRUE(c.fake->remove(lwsRef().named("other")).ok());
  ASSERT_TRUE(updateUntil(watch, hpas, [&] { return collected(watch).size() == 2; }));
  EXPECT_EQ(collected(watch), (std::vector<std::string>{"LeaderWorkerSet/big=2", "Scale/big=2"}));

  // No HPA names the kind any more: its informer stops and its cache goes.
  watch.update(ptrs({hpas[1], hpas[2]}), kNow);
  EXPECT_EQ(watch.stats().informers, 0);
  EXPECT_TRUE(collected(watch).empty());
}

TEST(ScaleTargetWatchTest, AScaleThatCannotBeReadIsTriedAgainAfterTheRetryDelay) {
  Cluster c;
  c.fake->setPath(kDiscoveryPath, resourceList(true));
  ASSERT_TRUE(c.fake->create(lwsRef(), leaderWorkerSet("big", 1, 2)).ok());
  ScaleTargetWatchOptions options;
  options.retryAfter = 30s;
  ScaleTargetWatch watch(c.client, options, nullptr);
  const std::vector<json> hpas{hpaOn("big", kApiVersion, "LeaderWorkerSet")};
  // The first Scale GET fails; the workload is listed meanwhile.
  c.fake->failNext("get", core::Status::forbidden("scale is forbidden"));
  ASSERT_TRUE(updateUntil(watch, hpas, [&] { return c.client->scaleGets.load() == 1; }));
  EXPECT_EQ(collected(watch), (std::vector<std::string>{"LeaderWorkerSet/big=1"}));
  watch.update(ptrs(hpas), kNow + 10s);
  EXPECT_EQ(c.client->scaleGets.load(), 1) << "not before the retry delay";
  watch.update(ptrs(hpas), kNow + 31s);
  EXPECT_EQ(c.client->scaleGets.load(), 2);
  EXPECT_EQ(collected(watch), (std::vector<std::string>{"LeaderWorkerSet/big=1", "Scale/big=1"}));
}

TEST(ScaleTargetWatchTest, AnHpaWhoseTargetKindCannotBeReadIsSkippedWithAReason) {
  struct Row {
    const char* what;
    std::optional<json> document;
    bool listFails;
    std::string reason;
  };
  const std::vector<Row> rows{
      {"the CRD is not installed", std::nullopt, false, "target_not_served"},
      {"no /scale subresource", resourceList(false), false, "target_not_scalable"},
      {"listing is forbidden", resourceList(true), true, "target_not_listed"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    Cluster c;
    if (row.document) c.fake->setPath(kDiscoveryPath, *row.document);
    if (row.listFails) c.fake->failNext("list", core::Status::forbidden("forbidden"), 1000);
    ScaleTargetWatchOptions options;
    options.retryAfter = 30s;
    ScaleTargetWatch watch(c.client, options, nullptr);
    const std::vector<json> hpas{hpaOn("big", kApiVersion, "LeaderWorkerSet"),
                                 hpaOn("also", kApiVersion, "LeaderWorkerSet")};
    ASSERT_TRUE(updateUntil(watch, hpas, [&] { return watch.skipped().size() == 2; }));
    for (const auto& s : watch.skipped()) {
      EXPECT_EQ(s.kind, "HorizontalPodAutoscaler");
      EXPECT_EQ(s.reason, row.reason) << s.message;
      EXPECT_NE(s.message.find("LeaderWorkerSet"), std::string::npos) << s.message;
    }
    EXPECT_EQ(watch.skipped()[0].uid, "hpa-big");
  }

  // A CRD installed later is found once the retry delay has passed.
  Cluster c;
  ScaleTargetWatchOptions options;
  options.retryAfter = 30s;
  ScaleTargetWatch watch(c.client, options, nullptr);
  const std::vector<json> hpas{hpaOn("big", kApiVersion, "LeaderWorkerSet")};
  watch.update(ptrs(hpas), kNow);
  ASSERT_EQ(watch.skipped().size(), 1u);
  c.fake->setPath(kDiscoveryPath, resourceList(true));
  watch.update(ptrs(hpas), kNow + 10s);
  EXPECT_EQ(watch.skipped().size(), 1u) << "discovery is not asked every pass";
  EXPECT_EQ(watch.stats().discoveries, 1u);
  watch.update(ptrs(hpas), kNow + 31s);
  EXPECT_TRUE(watch.skipped().empty());
  EXPECT_EQ(watch.stats().informers, 1);
}

TEST(ScaleTargetWatchTest, ExplainListsTheKindsAndSaysWhyATargetIsNotRead) {
  Cluster c;
  c.fake->setPath(kDiscoveryPath, resourceList(true));
  ASSERT_TRUE(c.fake->create(lwsRef(), leaderWorkerSet("big", 2, 2)).ok());
  json items = json::array({hpaOn("big", kApiVersion, "LeaderWorkerSet"),
                            hpaOn("pool", "example.com/v1", "InferencePool"),
                            hpaOn("web", "apps/v1", "Deployment")});
  for (auto& h : items) h["kind"] = "HorizontalPodAutoscaler";
  auto notRead = listScaleTargets(*c.client, {"apps/Deployment"}, items);
  ASSERT_TRUE(notRead.ok()) << notRead.status().toString();
  std::vector<std::string> kinds;
  for (const auto& i : items) kinds.push_back(i.value("kind", ""));
  EXPECT_EQ(kinds,
            (std::vector<std::string>{"HorizontalPodAutoscaler", "HorizontalPodAutoscaler",
                                      "HorizontalPodAutoscaler", "LeaderWorkerSet", "Scale"}));
  ASSERT_EQ(notRead->size(), 1u);
  EXPECT_EQ((*notRead)[0].name, "pool");
  EXPECT_EQ((*notRead)[0].reason, "target_not_served");

  const json dump{{"kind", "List"}, {"items", items}};
  auto policies =
      partition::parsePolicies("policies:\n- name: default\n  hpaNamespaces: [default]\n");
  ASSERT_TRUE(policies.ok());
  ExplainRequest request{"default", "pool", kNow, nullptr, *notRead};
  auto explained = explainHpas(dump, StateStoreOptions{}.name, *policies, request);
  ASSERT_TRUE(explained.ok()) << explained.status().toString();
  ASSERT_EQ(explained->hpas.size(), 1u);
  EXPECT_TRUE(
      explained->hpas[0].outside.starts_with("TargetNotRead: its scale target kind "
                                             "InferencePool (example.com/v1) cannot be "
                                             "read"))
      << explained->hpas[0].outside;
}

TEST(ScaleTargetWatchTest, TheControllerPlansAWorkloadScaledThroughScale) {
  Cluster c;
  c.fake->setPath(kDiscoveryPath, resourceList(true));
  const std::string res = "nvidia.com/mig-1g.5gb";
  auto create = [&](const char* resource, const std::string& ns, const json& o) {
    const bool core = std::string(resource) != "horizontalpodautoscalers";
    auto r = c.fake->create(
        kube::ResourceRef::collection(core ? "" : "autoscaling", core ? "v1" : "v2", resource, ns),
        o);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  };
  create("nodes", "", partition::testing::gpuNode("n1", {}, {{res, "4"}}));
  ASSERT_TRUE(c.fake->create(lwsRef(), leaderWorkerSet("big", 2, 2)).ok());
  create("horizontalpodautoscalers", "default", hpaOn("big", kApiVersion, "LeaderWorkerSet"));
  for (const char* name : {"big-0", "big-0-1", "big-1", "big-1-1"}) {
    json p = partition::testing::gpuPod("default", "big", 0, res, "n1");
    p["metadata"]["name"] = name;
    p["metadata"]["labels"] = {{"leaderworkerset.sigs.k8s.io/name", "big"}};
    create("pods", "default", p);
  }
  auto events = std::make_shared<MemoryEventRecorder>();
  auto actuator = std::make_shared<KubeActuator>(
      c.client, events, std::make_shared<NodeLevelGpuPodMapping>(), ActuatorOptions{});
  ControllerOptions options;
  options.dryRun = true;
  Controller controller(
      c.client, actuator, testing::seedPolicies(), events,
      std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>()), options);
  controller.start([] { return false; });  // the loop never passes: the test does
  ASSERT_TRUE(gpuscale::testing::waitUntil([&] { return controller.synced(); }, kPatience));
  PassResult r;
  gpuscale::testing::waitUntil(
      [&] {
        r = controller.passFromCaches(kNow);
        return !r.error.empty() || !r.plan.demands.empty();
      },
      kPatience);
  controller.stop();
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.plan.demands.size(), 1u) << partition::planToJson(r.plan).dump(2);
  EXPECT_EQ(r.plan.demands[0].name, "big");
  EXPECT_EQ(r.plan.demands[0].ceiling, 2) << "4 partitions hold 2 groups of 2";
  EXPECT_EQ(c.client->scaleGets.load(), 1);
}

}  // namespace scale_target_watch_test
}  // namespace gpuscale::reconciler
