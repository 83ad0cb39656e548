#include "gpuscale/apiserver/resource_metrics.h"

#include <gtest/gtest.h>

#include <chrono>

#include "gpuscale/apiserver/api_handler.h"

namespace gpuscale::apiserver {
namespace resource_metrics_test {

using Kind = ResourceMetricsRoute::Kind;

Timestamp at(int64_t unixSeconds) { return Timestamp(std::chrono::seconds(unixSeconds)); }

constexpr int64_t kMeasured = 1714557600;  // 2024-05-01T10:00:00Z
constexpr int64_t kAnswered = 1714557605;  // 2024-05-01T10:00:05Z

PodMetrics corednsPod() {
  PodMetrics pod;
  pod.namespaceName = "kube-system";
  pod.name = "coredns-5d78c9869d-x2x7q";
  pod.labels = {{"k8s-app", "kube-dns"}, {"pod-template-hash", "5d78c9869d"}};
  pod.timestamp = at(kMeasured);
  pod.window = std::chrono::minutes(5);
  pod.containers = {{"coredns",
                     {core::Quantity::fromNano(2094215),
                      core::Quantity::fromInt(13369344, core::Quantity::Format::kBinarySI)}}};
  return pod;
}

NodeMetrics kindNode() {
  NodeMetrics node;
  node.name = "kind-control-plane";
  node.labels = {{"kubernetes.io/hostname", "kind-control-plane"}};
  node.timestamp = at(kMeasured);
  node.window = std::chrono::seconds(20) + std::chrono::milliseconds(66);
  node.usage = {core::Quantity::fromNano(250000000),
                core::Quantity::fromInt(1048576, core::Quantity::Format::kBinarySI)};
  return node;
}

// The documents as metrics-server writes them (field order of the Go structs, map keys sorted).
TEST(ResourceMetricsJson, MatchesMetricsServer) {
  struct Case {
    std::string what;
    Json document;
    std::string want;
  };
  PodMetrics bare = corednsPod();
  bare.labels.clear();
  const std::vector<Case> cases = {
      {"pod list: items without kind, list metadata {}",
       podMetricsListJson({corednsPod()}, at(kAnswered)),
       R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[)"
       R"({"metadata":{"name":"coredns-5d78c9869d-x2x7q","namespace":"kube-system",)"
       R"("creationTimestamp":"2024-05-01T10:00:05Z","labels":{"k8s-app":"kube-dns",)"
       R"("pod-template-hash":"5d78c9869d"}},"timestamp":"2024-05-01T10:00:00Z","window":"5m0s",)"
       R"("containers":[{"name":"coredns","usage":{"cpu":"2094215n","memory":"13056Ki"}}]}]})"},
      {"single pod: kind and apiVersion first; no labels, no labels field",
       podMetricsJson(bare, at(kAnswered), true),
       R"({"kind":"PodMetrics","apiVersion":"metrics.k8s.io/v1beta1","metadata":{"name":)"
       R"("coredns-5d78c9869d-x2x7q","namespace":"kube-system","creationTimestamp":)"
       R"("2024-05-01T10:00:05Z"},"timestamp":"2024-05-01T10:00:00Z","window":"5m0s",)"
       R"("containers":[{"name":"coredns","usage":{"cpu":"2094215n","memory":"13056Ki"}}]})"},
      {"node list: usage keys sorted, fractional window as Go prints it",
       nodeMetricsListJson({kindNode()}, at(kAnswered)),
       R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[)"
       R"({"metadata":{"name":"kind-control-plane","creationTimestamp":"2024-05-01T10:00:05Z",)"
       R"("labels":{"kubernetes.io/hostname":"kind-control-plane"}},"timestamp":)"
       R"("2024-05-01T10:00:00Z","window":"20.066s","usage":{"cpu":"250m","memory":"1Mi"}}]})"},
      {"single node", nodeMetricsJson(kindNode(), at(kAnswered), true),
       R"({"kind":"NodeMetrics","apiVersion":"metrics.k8s.io/v1beta1","metadata":{"name":)"
       R"("kind-control-plane","creationTimestamp":"2024-05-01T10:00:05Z","labels":{)"
       R"("kubernetes.io/hostname":"kind-control-plane"}},"timestamp":"2024-05-01T10:00:00Z",)"
       R"("window":"20.066s","usage":{"cpu":"250m","memory":"1Mi"}})"},
      {"empty list: items [] (never null)", podMetricsListJson({}, at(kAnswered)),
       R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[]})"},
      {"discovery", resourceMetricsResourceListJson(),
       R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"metrics.k8s.io/v1beta1",)"
       R"("resources":[{"name":"nodes","singularName":"","namespaced":false,"kind":"NodeMetrics",)"
       R"("verbs":["get","list"]},{"name":"pods","singularName":"","namespaced":true,"kind":)"
       R"("PodMetrics","verbs":["get","list"]}]})"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(encodeJson(c.document, false), c.want + "\n") << c.what;
  }
}

TEST(ResourceMetricsJson, NotFoundStatuses) {
  struct Case {
    std::string what;
    core::Status status;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"pod without metrics", podMetricsNotFound("default", "web-1"),
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
       R"("podmetrics.metrics.k8s.io \"default/web-1\" not found","reason":"NotFound","details":)"
       R"({"name":"default/web-1","group":"metrics.k8s.io","kind":"podmetrics"},"code":404})"},
      {"node without metrics", nodeMetricsNotFound("n1"),
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
       R"("nodemetrics.metrics.k8s.io \"n1\" not found","reason":"NotFound","details":)"
       R"({"name":"n1","group":"metrics.k8s.io","kind":"nodemetrics"},"code":404})"},
      {"pod that is not listed", objectNotFound("pods", "web-9"),
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
       R"("pods \"web-9\" not found","reason":"NotFound","details":{"name":"web-9","kind":)"
       R"("pods"},"code":404})"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(encodeJson(c.status.toKubernetesJson(), false), c.want + "\n") << c.what;
  }
}

TEST(ResourceMetricsRoute, Paths) {
  struct Case {
    std::string what;
    std::string method;
    std::string path;
    std::string query;
    int code;  // 200: routed
    Kind kind = Kind::kResourceList;
    std::string namespaceName = "";
    std::string name = "";
  };
  const std::string p = "/apis/metrics.k8s.io/v1beta1";
  const std::vector<Case> cases = {
      {"resource list", "GET", p, "", 200},
      {"resource list, trailing slash", "GET", p + "/", "", 200},
      {"every node", "GET", p + "/nodes", "", 200, Kind::kNodes},
      {"one node", "GET", p + "/nodes/n1", "", 200, Kind::kNodes, "", "n1"},
      {"every namespace's pods", "GET", p + "/pods", "labelSelector=app%3Dweb", 200, Kind::kPods},
      {"one namespace's pods", "GET", p + "/namespaces/ns/pods", "", 200, Kind::kPods, "ns"},
      {"one pod", "GET", p + "/namespaces/ns/pods/web-1", "", 200, Kind::kPods, "ns", "web-1"},
      {"pagination is ignored", "GET", p + "/pods", "limit=1&continue=x", 200, Kind::kPods},
      {"a pod needs its namespace", "GET", p + "/pods/web-1", "", 404},
      {"unknown resource", "GET", p + "/services", "", 404},
      {"too deep", "GET", p + "/namespaces/ns/pods/web-1/x", "", 404},
      {"empty part", "GET", p + "//nodes", "", 404},
      {"other group prefix", "GET", "/apis/metrics.k8s.io/v1", "", 404},
      {"write", "POST", p + "/nodes", "", 405},
      {"bad label selector", "GET", p + "/nodes", "labelSelector=a%20in%20(", 400},
      {"bad field selector", "GET", p + "/pods", "fieldSelector=%3D%3D", 400},
  };
  for (const Case& c : cases) {
    auto route = routeResourceMetricsApi(c.method, c.path, QueryParams::parse(c.query));
    if (c.code != 200) {
      ASSERT_FALSE(route.ok()) << c.what;
      EXPECT_EQ(route.status().httpCode(), c.code) << c.what;
      continue;
    }
    ASSERT_TRUE(route.ok()) << c.what << ": " << route.status().message();
    EXPECT_EQ(route->kind, c.kind) << c.what;
    EXPECT_EQ(route->namespaceName, c.namespaceName) << c.what;
    EXPECT_EQ(route->name, c.name) << c.what;
  }
}

TEST(ResourceMetricsRoute, FieldSelectors) {
  struct Case {
    std::string what;
    std::string selector;
    bool matches;
  };
  const std::vector<Case> cases = {
      {"empty", "", true},
      {"name", "metadata.name=web-1", true},
      {"other name", "metadata.name==web-2", false},
      {"namespace", "metadata.namespace=default,metadata.name!=web-2", true},
      {"unknown key: no value", "spec.nodeName=n1", false},
  };
  for (const Case& c : cases) {
    auto selector = core::LabelSelector::parse(c.selector);
    ASSERT_TRUE(selector.ok()) << c.what;
    EXPECT_EQ(matchesFieldSelector(*selector, "default", "web-1"), c.matches) << c.what;
  }
}

// A provider that serves one pod and one node and fails node lists.
class OnePodProvider final : public ResourceMetricsProvider {
 public:
  core::Result<std::vector<PodMetrics>> listPodMetrics(std::string_view,
                                                       const core::LabelSelector&) override {
    PodMetrics other = corednsPod();
    other.name = "coredns-other";
    return std::vector<PodMetrics>{corednsPod(), other};
  }
  core::Result<PodMetrics> getPodMetrics(std::string_view ns, std::string_view name) override {
    if (name != corednsPod().name) return podMetricsNotFound(ns, name);
    return corednsPod();
  }
  core::Result<std::vector<NodeMetrics>> listNodeMetrics(const core::LabelSelector&) override {
    return core::Status::unavailable("unable to fetch metrics: connection refused");
  }
  core::Result<NodeMetrics> getNodeMetrics(std::string_view) override { return kindNode(); }
};

HttpRequest get(std::string path, std::string query = "") {
  HttpRequest request;
  request.method = "GET";
  request.path = path;
  request.target = path + (query.empty() ? "" : "?" + query);
  request.rawQuery = std::move(query);
  return request;
}

TEST(ResourceMetricsHandler, ServesTheGroup) {
  ApiHandlerConfig config;
  config.resourceMetrics = std::make_shared<OnePodProvider>();
  ApiHandler handler(std::move(config));
  const std::string p = "/apis/metrics.k8s.io/v1beta1";

  const HttpResponse groups = handler.handle(get("/apis"));
  EXPECT_NE(groups.body.find(R"("name":"metrics.k8s.io")"), std::string::npos) << groups.body;
  EXPECT_EQ(handler.handle(get("/apis/metrics.k8s.io")).status, 200);
  EXPECT_EQ(handler.handle(get(p)).body, encodeJson(resourceMetricsResourceListJson(), false));

  const HttpResponse filtered = handler.handle(
      get(p + "/namespaces/kube-system/pods", "fieldSelector=metadata.name%3Dcoredns-other"));
  EXPECT_EQ(filtered.status, 200);
  EXPECT_NE(filtered.body.find(R"("name":"coredns-other")"), std::string::npos);
  EXPECT_EQ(filtered.body.find(R"("name":"coredns-5d78c9869d-x2x7q")"), std::string::npos);

  const HttpResponse one =
      handler.handle(get(p + "/namespaces/kube-system/pods/coredns-5d78c9869d-x2x7q"));
  EXPECT_EQ(one.status, 200);
  EXPECT_TRUE(one.body.starts_with(R"({"kind":"PodMetrics",)")) << one.body;

  EXPECT_EQ(handler.handle(get(p + "/namespaces/kube-system/pods/nope")).status, 404);
  EXPECT_EQ(handler.handle(get(p + "/nodes")).status, 503);
  EXPECT_EQ(handler.handle(get(p + "/nodes/kind-control-plane")).status, 200);
}

TEST(ResourceMetricsHandler, NotServedWithoutProvider) {
  ApiHandler handler(ApiHandlerConfig{});
  EXPECT_EQ(handler.handle(get("/apis")).body.find("metrics.k8s.io\""), std::string::npos);
  EXPECT_EQ(handler.handle(get("/apis/metrics.k8s.io/v1beta1/nodes")).status, 404);
}

}  // namespace resource_metrics_test
}  // namespace gpuscale::apiserver
