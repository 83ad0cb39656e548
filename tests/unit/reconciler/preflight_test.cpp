// Preflight (preflight.h) on a fake cluster, one row per cluster condition: what each check says
// and whether the whole passes. The ready cluster: kube-apiserver answers, every permission is
// granted, the GPU Operator's namespace, ConfigMaps and a ClusterPolicy naming the reconciler's
// ConfigMaps, one GPU node with a successful MIG config and one CPU node.
#include "gpuscale/reconciler/preflight.h"

#include <functional>
#include <set>

#include <gtest/gtest.h>

#include "fakes/fake_kube_client.h"

namespace gpuscale::reconciler {
namespace preflight_test {

using nlohmann::json;
using testing::FakeKubeClient;

kube::ResourceRef coll(const char* group, const char* resource, const std::string& ns = {}) {
  return kube::ResourceRef::collection(group, "v1", resource, ns);
}

json object(const char* kind, const std::string& name, const std::string& ns = {}) {
  json o = {{"apiVersion", "v1"}, {"kind", kind}, {"metadata", {{"name", name}}}};
  if (!ns.empty()) o["metadata"]["namespace"] = ns;
  return o;
}

json node(const std::string& name, json labels) {
  json n = object("Node", name);
  n["metadata"]["labels"] = std::move(labels);
  return n;
}

// The permissions (Permission::text()) the identity lacks; SelfSubjectAccessReviews answer from it.
struct Cluster {
  FakeKubeClient fake;
  std::set<std::string> denied;

  Cluster() {
    fake.setPath("/version", {{"gitVersion", "v1.31.0"}});
    fake.setCreateHook("selfsubjectaccessreviews", [this](const json& review) {
      const json& a = review["spec"]["resourceAttributes"];
      Permission p{a["verb"],
                   a["group"],
                   a["resource"],
                   a.value("subresource", ""),
                   a.value("namespace", ""),
                   a.value("name", "")};
      return core::Result<json>(json{{"status", {{"allowed", !denied.contains(p.text())}}}});
    });
    add(coll("", "namespaces"), object("Namespace", "gpu-operator"));
    for (const char* cm :
         {"default-mig-parted-config", "gpuscale-mig-parted-config", "device-plugin-config"}) {
      add(coll("", "configmaps", "gpu-operator"), object("ConfigMap", cm, "gpu-operator"));
    }
    json policy = object("ClusterPolicy", "cluster-policy");
    policy["apiVersion"] = "nvidia.com/v1";
    policy["spec"] = {{"migManager", {{"config", {{"name", "gpuscale-mig-parted-config"}}}}},
                      {"devicePlugin", {{"config", {{"name", "device-plugin-config"}}}}},
                      {"mig", {{"strategy", "mixed"}}}};
    add(coll("nvidia.com", "clusterpolicies"), policy);
    json operatorDeployment = object("Deployment", "gpu-operator", "gpu-operator");
    operatorDeployment["spec"] = {
        {"template",
         {{"spec",
           {{"containers", {{{"name", "gpu-operator"}, {"image", "gpu-operator:v25.3.0"}}}}}}}}};
    add(coll("apps", "deployments", "gpu-operator"), operatorDeployment);
    for (const char* ds : {"nvidia-mig-manager", "nvidia-device-plugin-daemonset"}) {
      json d = object("DaemonSet", ds, "gpu-operator");
      d["status"] = {{"numberReady", 1}, {"desiredNumberScheduled", 1}};
      add(coll("apps", "daemonsets", "gpu-operator"), d);
    }
    add(coll("", "nodes"), node("gpu-0", {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
                                          {"nvidia.com/mig.config", "all-1g.5gb"},
                                          {"nvidia.com/mig.config.state", "success"}}));
    add(coll("", "nodes"), node("cpu-0", json::object()));
  }
  void add(const kube::ResourceRef& ref, const json& o) { ASSERT_TRUE(fake.create(ref, o)); }
  // An HPA on a LeaderWorkerSet, whose API discovery lists when `served`.
  void scaleLeaderWorkerSet(bool served) {
    json hpa = object("HorizontalPodAutoscaler", "big", "default");
    hpa["spec"] = {{"scaleTargetRef",
                    {{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
                     {"kind", "LeaderWorkerSet"},
                     {"name", "big"}}}};
    add(kube::ResourceRef::collection("autoscaling", "v2", "horizontalpodautoscalers", "default"),
        hpa);
    if (!served) return;
    fake.setPath(
        "/apis/leaderworkerset.x-k8s.io/v1",
        {{"resources",
          {{{"name", "leaderworkersets"}, {"namespaced", true}, {"kind", "LeaderWorkerSet"}},
           {{"name", "leaderworkersets/scale"}, {"namespaced", true}, {"kind", "Scale"}}}}});
  }
  void remove(const kube::ResourceRef& ref) { ASSERT_TRUE(fake.remove(ref).ok()); }
};

struct Expected {
  std::string check;
  CheckOutcome outcome;
  std::string inDetailOrHint;  // a piece of the line that says why
};

struct Row {
  std::string what;
  std::function<void(Cluster&)> change;
  bool passes;
  std::vector<Expected> expected;  // the checks the change is about
};

const std::vector<Row>& rows() {
  static const std::vector<Row> kRows = {
      {"a ready cluster passes",
       [](Cluster&) {},
       true,
       {{"api", CheckOutcome::kOk, "v1.31.0"},
        {"permissions", CheckOutcome::kOk, "are granted"},
        {"operator-namespace", CheckOutcome::kOk, "gpu-operator"},
        {"stock-mig-config", CheckOutcome::kOk, "default-mig-parted-config"},
        {"mig-config", CheckOutcome::kOk, "gpuscale-mig-parted-config"},
        {"device-plugin-config", CheckOutcome::kOk, "device-plugin-config"},
        {"cluster-policy cluster-policy", CheckOutcome::kOk, "spec.devicePlugin.config.name"},
        {"cluster-policy cluster-policy", CheckOutcome::kOk, "spec.mig.strategy is mixed"},
        {"gpu-operator", CheckOutcome::kOk, "release v25.3.0"},
        {"mig-manager", CheckOutcome::kOk, "nvidia-mig-manager: 1 of 1 ready"},
        {"device-plugin", CheckOutcome::kOk, "nvidia-device-plugin-daemonset: 1 of 1 ready"},
        {"gpu-nodes", CheckOutcome::kOk, "1 GPU node(s) of 2"},
        {"node gpu-0", CheckOutcome::kOk, "nvidia.com/mig.config.state=success"},
        {"api resource.k8s.io/v1", CheckOutcome::kWarn,
         "resource.k8s.io/v1 is not served: resourceslices, deviceclasses, "
         "resourceclaimtemplates, resourceclaims are not watched"},
        {"api gpuscale.io/v1alpha1", CheckOutcome::kWarn, "install the GPUCapacityRequest CRD"}}},
      {"the GPUCapacityRequest CRD installed and readable",
       [](Cluster& c) {
         c.fake.setPath("/apis/gpuscale.io/v1alpha1", {{"resources", json::array()}});
       },
       true,
       {{"api gpuscale.io/v1alpha1", CheckOutcome::kOk,
         "served; gpucapacityrequests may be listed and watched"}}},
      {"the GPUCapacityRequest CRD installed but not readable: fails",
       [](Cluster& c) {
         c.fake.setPath("/apis/gpuscale.io/v1alpha1", {{"resources", json::array()}});
         c.denied = {"watch gpucapacityrequests.gpuscale.io"};
       },
       false,
       {{"api gpuscale.io/v1alpha1", CheckOutcome::kFail,
         "served, but the reconciler may not: watch gpucapacityrequests.gpuscale.io"}}},
      {"DRA served and readable",
       [](Cluster& c) {
         c.fake.setPath("/apis/resource.k8s.io/v1", {{"resources", json::array()}});
       },
       true,
       {{"api resource.k8s.io/v1", CheckOutcome::kOk,
         "served; resourceslices, deviceclasses, resourceclaimtemplates, resourceclaims may be "
         "listed and watched"}}},
      {"DRA served but not granted: fails",
       [](Cluster& c) {
         c.fake.setPath("/apis/resource.k8s.io/v1", {{"resources", json::array()}});
         c.denied = {"list resourceslices.resource.k8s.io", "watch resourceclaims.resource.k8s.io"};
       },
       false,
       {{"api resource.k8s.io/v1", CheckOutcome::kFail,
         "served, but the reconciler may not: list resourceslices.resource.k8s.io, watch "
         "resourceclaims.resource.k8s.io"}}},
      {"a GPU Operator installed another way, its mig-manager not ready: warnings",
       [](Cluster& c) {
         c.remove(coll("apps", "deployments", "gpu-operator").named("gpu-operator"));
         c.remove(
             coll("apps", "daemonsets", "gpu-operator").named("nvidia-device-plugin-daemonset"));
         ASSERT_TRUE(
             c.fake.patch(coll("apps", "daemonsets", "gpu-operator").named("nvidia-mig-manager"),
                          kube::PatchType::kMerge, {{"status", {{"numberReady", 0}}}}));
       },
       true,
       {{"gpu-operator", CheckOutcome::kWarn, "no gpu-operator Deployment"},
        {"mig-manager", CheckOutcome::kWarn, "0 of 1 ready"},
        {"device-plugin", CheckOutcome::kWarn, "spec.devicePlugin.enabled"}}},
      {"kube-apiserver does not answer: only that is said",
       [](Cluster& c) { c.fake.failNext("getPath", core::Status::unavailable("refused")); },
       false,
       {{"api", CheckOutcome::kFail, "refused"}}},
      {"the observe-only grants: every write act needs is listed",
       [](Cluster& c) {
         c.denied = {"patch nodes", "patch horizontalpodautoscalers.autoscaling",
                     "create configmaps gpu-operator",
                     "update configmaps gpu-operator/device-plugin-config"};
       },
       false,
       {{"permissions", CheckOutcome::kFail,
         "4 of 30 permissions act mode needs are missing: patch nodes, patch "
         "horizontalpodautoscalers.autoscaling, update configmaps "
         "gpu-operator/device-plugin-config, create configmaps gpu-operator"},
        {"permissions", CheckOutcome::kFail, "components/act"}}},
      {"SelfSubjectAccessReviews cannot be asked",
       [](Cluster& c) { c.fake.failNext("create", core::Status::forbidden("no")); },
       false,
       {{"permissions", CheckOutcome::kFail, "cannot ask SelfSubjectAccessReviews"}}},
      {"no operator namespace",
       [](Cluster& c) { c.remove(coll("", "namespaces").named("gpu-operator")); },
       false,
       {{"operator-namespace", CheckOutcome::kFail, "--operator-namespace"}}},
      {"an operator namespace this identity may not read is a warning",
       [](Cluster& c) { c.fake.failNext("get", core::Status::forbidden("namespaces")); },
       true,
       {{"operator-namespace", CheckOutcome::kWarn, "cannot read namespace gpu-operator"}}},
      {"the reconciler's mig-parted ConfigMap before its first MIG change",
       [](Cluster& c) {
         c.remove(coll("", "configmaps", "gpu-operator").named("gpuscale-mig-parted-config"));
       },
       true,
       {{"mig-config", CheckOutcome::kWarn,
         "create it now, before the ClusterPolicy names it, with gpuscale-reconciler configmaps "
         "init"}}},
      {"no device-plugin ConfigMap yet",
       [](Cluster& c) {
         c.remove(coll("", "configmaps", "gpu-operator").named("device-plugin-config"));
       },
       true,
       {{"device-plugin-config", CheckOutcome::kWarn,
         "create it now with gpuscale-reconciler configmaps init"}}},
      {"the ClusterPolicy still names the stock ConfigMap: the patch that fixes it",
       [](Cluster& c) {
         ASSERT_TRUE(c.fake.patch(
             coll("nvidia.com", "clusterpolicies").named("cluster-policy"), kube::PatchType::kMerge,
             {{"spec", {{"migManager", {{"config", {{"name", "default-mig-parted-config"}}}}}}}}));
       },
       false,
       {{"cluster-policy cluster-policy", CheckOutcome::kFail,
         "spec.migManager.config.name is default-mig-parted-config, not "
         "gpuscale-mig-parted-config"},
        {"cluster-policy cluster-policy", CheckOutcome::kFail,
         "kubectl patch clusterpolicy cluster-policy --type=merge -p "
         R"('{"spec":{"migManager":{"config":{"name":"gpuscale-mig-parted-config"}}}}')"},
        {"cluster-policy cluster-policy", CheckOutcome::kOk, "spec.devicePlugin.config.name"}}},
      {"no device-plugin config in the ClusterPolicy",
       [](Cluster& c) {
         ASSERT_TRUE(c.fake.patch(coll("nvidia.com", "clusterpolicies").named("cluster-policy"),
                                  kube::PatchType::kMerge,
                                  {{"spec", {{"devicePlugin", nullptr}}}}));
       },
       false,
       {{"cluster-policy cluster-policy", CheckOutcome::kFail,
         "spec.devicePlugin.config.name is not set"}}},
      {"no ClusterPolicy CRD is a warning",
       [](Cluster& c) { c.fake.failNext("list", core::Status::notFound("the server could not")); },
       true,
       {{"cluster-policy", CheckOutcome::kWarn, "no ClusterPolicy resource"}}},
      {"ClusterPolicies this identity may not read is a warning",
       [](Cluster& c) { c.fake.failNext("list", core::Status::forbidden("clusterpolicies")); },
       true,
       {{"cluster-policy", CheckOutcome::kWarn, "cannot read ClusterPolicies"}}},
      {"no ClusterPolicy object",
       [](Cluster& c) { c.remove(coll("nvidia.com", "clusterpolicies").named("cluster-policy")); },
       false,
       {{"cluster-policy", CheckOutcome::kFail, "no ClusterPolicy object"}}},
      {"no GPU node",
       [](Cluster& c) { c.remove(coll("", "nodes").named("gpu-0")); },
       false,
       {{"gpu-nodes", CheckOutcome::kFail, "none of 1 Nodes"}}},
      {"a node found by nvidia.com/gpu.present alone",
       [](Cluster& c) {
         c.add(coll("", "nodes"), node("gpu-1", {{"nvidia.com/gpu.present", "true"}}));
       },
       true,
       {{"gpu-nodes", CheckOutcome::kOk, "2 GPU node(s) of 3"},
        {"node gpu-1", CheckOutcome::kOk, "nvidia.com/mig.config=(none)"}}},
      {"a MIG change in progress is a warning",
       [](Cluster& c) {
         c.add(coll("", "nodes"),
               node("gpu-1", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                              {"nvidia.com/mig.config.state", "pending"}}));
       },
       true,
       {{"node gpu-1", CheckOutcome::kWarn, "wait until mig-manager reports success"}}},
      {"an HPA scales a LeaderWorkerSet: served with /scale and readable",
       [](Cluster& c) { c.scaleLeaderWorkerSet(true); },
       true,
       {{"scale-target LeaderWorkerSet", CheckOutcome::kOk, "1 HPA(s), e.g. default/big"}}},
      {"an HPA scales a LeaderWorkerSet the identity may not list",
       [](Cluster& c) {
         c.scaleLeaderWorkerSet(true);
         c.denied.insert("list leaderworkersets.leaderworkerset.x-k8s.io");
         c.denied.insert("get leaderworkersets.leaderworkerset.x-k8s.io/scale");
       },
       false,
       {{"scale-target LeaderWorkerSet", CheckOutcome::kFail,
         "missing list leaderworkersets.leaderworkerset.x-k8s.io, get "
         "leaderworkersets.leaderworkerset.x-k8s.io/scale"}}},
      {"an HPA scales a kind the cluster does not serve",
       [](Cluster& c) { c.scaleLeaderWorkerSet(false); },
       true,
       {{"scale-target LeaderWorkerSet", CheckOutcome::kWarn, "serves no apiVersion"}}},
      {"a failed MIG change fails",
       [](Cluster& c) {
         ASSERT_TRUE(c.fake.patch(
             coll("", "nodes").named("gpu-0"), kube::PatchType::kMerge,
             {{"metadata", {{"labels", {{"nvidia.com/mig.config.state", "failed"}}}}}}));
       },
       false,
       {{"node gpu-0", CheckOutcome::kFail, "mig-manager failed"}}},
  };
  return kRows;
}

TEST(Preflight, Table) {
  for (const auto& row : rows()) {
    SCOPED_TRACE(row.what);
    Cluster cluster;
    row.change(cluster);
    const PreflightReport report = preflight(cluster.fake, PreflightOptions{});
    EXPECT_EQ(report.passed(), row.passes) << preflightText(report);
    for (const auto& want : row.expected) {
      const bool found =
          std::any_of(report.checks.begin(), report.checks.end(), [&](const auto& c) {
            return c.name == want.check && c.outcome == want.outcome &&
                   (c.detail.find(want.inDetailOrHint) != std::string::npos ||
                    c.hint.find(want.inDetailOrHint) != std::string::npos);
          });
      EXPECT_TRUE(found) << want.check << " " << checkOutcomeName(want.outcome) << " "
                         << want.inDetailOrHint << "\n"
                         << preflightText(report);
    }
  }
}

TEST(Preflight, ApiDownStopsTheOtherChecks) {
  Cluster cluster;
  cluster.fake.failNext("getPath", core::Status::unavailable("refused"));
  EXPECT_EQ(preflight(cluster.fake, {}).checks.size(), 1u);
}

TEST(Preflight, AsksEveryPermissionInItsNamespaces) {
  PreflightOptions o;
  o.operatorNamespace = "nvidia";
  o.ns = "autoscaling";
  std::set<std::string> texts;
  for (const auto& p : actPermissions(o)) texts.insert(p.text());
  for (const char* want :
       {"list nodes", "watch pods", "get deployments.apps/scale", "list configmaps nvidia",
        "get configmaps autoscaling/gpuscale-reconciler-state", "patch nodes",
        "patch horizontalpodautoscalers.autoscaling", "patch scaledobjects.keda.sh",
        "patch gpucapacityrequests.gpuscale.io/status",
        "update configmaps nvidia/gpuscale-mig-parted-config",
        "patch configmaps nvidia/device-plugin-config", "create configmaps nvidia",
        "patch configmaps autoscaling/gpuscale-reconciler-state", "create configmaps autoscaling",
        "update leases.coordination.k8s.io autoscaling/gpuscale-reconciler",
        "create leases.coordination.k8s.io autoscaling", "create events", "patch events"}) {
    EXPECT_TRUE(texts.contains(want)) << want;
  }
}

TEST(Preflight, TextAndJson) {
  PreflightReport report;
  report.checks = {{"api", CheckOutcome::kOk, "kube-apiserver v1.31.0", ""},
                   {"permissions", CheckOutcome::kFail, "1 of 27 missing: patch nodes", "grant"}};
  EXPECT_EQ(preflightText(report),
            "ok   api: kube-apiserver v1.31.0\n"
            "fail permissions: 1 of 27 missing: patch nodes\n"
            "       hint: grant\n"
            "preflight failed: fix what fails before --mode=act\n");
  const json parsed = json::parse(preflightJson(report));
  EXPECT_EQ(parsed["passed"], false);
  EXPECT_EQ(parsed["checks"][1]["result"], "fail");
  EXPECT_EQ(parsed["checks"][1]["hint"], "grant");
}

TEST(Preflight, SaysHowManyGpuNodesEachPolicyMayChange) {
  auto policies = partition::parsePolicies(R"(
policies:
- name: a100
  hpaNamespaces: [default]
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB}
- name: h100
  hpaNamespaces: [default]
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
)");
  ASSERT_TRUE(policies.ok()) << policies.status().toString();
  Cluster cluster;
  PreflightOptions o;
  o.policies = &*policies;
  const PreflightReport report = preflight(cluster.fake, o);
  auto line = [&](const std::string& name) {
    for (const auto& c : report.checks) {
      if (c.name == name) return std::string(checkOutcomeName(c.outcome)) + " " + c.detail;
    }
    return std::string("missing");
  };
  EXPECT_EQ(line("policy a100"), "ok 1 of 1 GPU node(s) in scope");
  EXPECT_EQ(line("policy h100"), "warn 0 of 1 GPU node(s) in scope");
  EXPECT_TRUE(report.passed()) << preflightText(report);
}

}  // namespace preflight_test
}  // namespace gpuscale::reconciler
