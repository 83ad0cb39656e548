#include <gtest/gtest.h>

#include "gpuscale/apiserver/metric_request.h"

namespace gpuscale::apiserver {
namespace router_test {

struct Row {
  const char* what;
  const char* method;
  const char* group;
  const char* version;
  std::string target;   // decoded path + optional ?query
  int code;             // 200 = routed
  const char* message;  // expected Status message when code != 200
  ApiRoute::Kind kind = ApiRoute::Kind::kCustomMetric;
  const char* ns = "";
  const char* resource = "";  // GroupResource::toString()
  const char* name = "";
  const char* metric = "";
  bool wildcard = false;
};

class RouterTest : public ::testing::TestWithParam<Row> {};

TEST_P(RouterTest, Routes) {
  const Row& row = GetParam();
  std::string_view target = row.target;
  const size_t q = target.find('?');
  const auto query = QueryParams::parse(q == std::string_view::npos ? "" : target.substr(q + 1));
  const auto route =
      routeMetricsApi(row.method, row.group, row.version, target.substr(0, q), query);
  if (row.code != 200) {
    ASSERT_FALSE(route.ok()) << row.what;
    EXPECT_EQ(route.status().httpCode(), row.code) << row.what;
    EXPECT_EQ(route.status().message(), row.message) << row.what;
    return;
  }
  ASSERT_TRUE(route.ok()) << row.what << ": " << route.status().toString();
  EXPECT_EQ(route->kind, row.kind) << row.what;
  const MetricRequest& request = route->request;
  EXPECT_EQ(request.group, row.group) << row.what;
  EXPECT_EQ(request.version, row.version) << row.what;
  EXPECT_EQ(request.namespaceName, row.ns) << row.what;
  EXPECT_EQ(request.resource.toString(), row.resource) << row.what;
  EXPECT_EQ(request.name, row.name) << row.what;
  EXPECT_EQ(request.metric, row.metric) << row.what;
  EXPECT_EQ(request.wildcard, row.wildcard) << row.what;
}

constexpr const char* kCm = "custom.metrics.k8s.io";
constexpr const char* kEm = "external.metrics.k8s.io";
constexpr const char* kNotFound = "the server could not find the requested resource";
constexpr const char* kNotAllowed =
    "the server does not allow this method on the requested resource";
using K = ApiRoute::Kind;

// A GET below custom.metrics.k8s.io/`version` (`path` after the version root) routed to a metric.
Row customMetric(const char* what, const char* version, const std::string& path, const char* ns,
                 const char* resource, const char* name, const char* metric, bool wildcard) {
  return Row{what,
             "GET",
             kCm,
             version,
             "/apis/custom.metrics.k8s.io/" + std::string(version) + path,
             200,
             "",
             K::kCustomMetric,
             ns,
             resource,
             name,
             metric,
             wildcard};
}

// A request below custom.metrics.k8s.io/v1beta1 (`path` after the version root) that fails.
Row customFails(const char* what, const std::string& path, int code, const char* message,
                const char* method = "GET") {
  return Row{what, method, kCm, "v1beta1", "/apis/custom.metrics.k8s.io/v1beta1" + path,
             code, message};
}

INSTANTIATE_TEST_SUITE_P(
    Custom, RouterTest,
    ::testing::Values(
        Row{"version root is the resource list", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1", 200, "", K::kResourceList},
        Row{"version root with trailing slash", "GET", kCm, "v1beta2",
            "/apis/custom.metrics.k8s.io/v1beta2/", 200, "", K::kResourceList},
        customMetric("root-scoped named object", "v1beta1", "/nodes/n1/m", "", "nodes", "n1", "m",
                     false),
        customMetric("root-scoped wildcard", "v1beta1",
                     "/persistentvolumes/*/m?labelSelector=a%3Db", "", "persistentvolumes", "*",
                     "m", true),
        customMetric("namespaced named object with group", "v1beta2",
                     "/namespaces/ns/deployments.apps/web/m", "ns", "deployments.apps", "web", "m",
                     false),
        customMetric("namespaced wildcard (HPA pods metric)", "v1beta1",
                     "/namespaces/default/pods/*/avg_time_queue_us?labelSelector=app%3Dtriton",
                     "default", "pods", "*", "avg_time_queue_us", true),
        customMetric("namespace's own metric is rewritten to namespaces/{ns}", "v1beta1",
                     "/namespaces/ns1/metrics/foo", "", "namespaces", "ns1", "foo", false),
        customMetric("all namespaces' metric", "v1beta1",
                     "/namespaces/*/metrics/foo?labelSelector=team", "", "namespaces", "*", "foo",
                     true),
        customMetric("fieldSelector naming the object is accepted", "v1beta1",
                     "/namespaces/ns/pods/p1/m?fieldSelector=metadata.name%3Dp1", "ns", "pods",
                     "p1", "m", false),
        customMetric("fieldSelector with == is accepted", "v1beta1",
                     "/nodes/n1/m?fieldSelector=metadata.name%3D%3Dn1", "", "nodes", "n1", "m",
                     false),
        customMetric("other list options are ignored", "v1beta1",
                     "/nodes/n1/m?limit=5&watch=true&selector=x", "", "nodes", "n1", "m", false),
        customMetric("namespace status subresource is a root-scoped namespace metric", "v1beta1",
                     "/namespaces/ns/status", "", "namespaces", "ns", "status", false),
        // Errors.
        customFails("/namespaces/ns/metrics is an invalid path", "/namespaces/ns/metrics", 400,
                    "invalid request path"),
        customFails("/namespaces/ns/foo is an invalid path", "/namespaces/ns/foo", 400,
                    "invalid request path"),
        customFails("two parts match no route", "/a/b", 404, kNotFound),
        customFails("one part matches no route", "/a", 404, kNotFound),
        customFails("four parts outside namespaces/x/metrics", "/namespaces/ns/pods/p", 404,
                    kNotFound),
        customFails("six parts", "/namespaces/ns/pods/p/m/x", 404, kNotFound),
        customFails("empty inner part", "/nodes//m", 404, kNotFound),
        customFails("trailing slash on an object path", "/nodes/n/m/", 404, kNotFound),
        customFails("POST on a metric is 405", "/nodes/n1/m", 405, kNotAllowed, "POST"),
        customFails("DELETE on the resource list is 405", "", 405, kNotAllowed, "DELETE"),
        customFails("POST on an unroutable path is 404", "/a/b", 404, kNotFound, "POST"),
        customFails("fieldSelector naming another object",
                    "/namespaces/ns/pods/p1/m?fieldSelector=metadata.name%3Dp2", 400,
                    "fieldSelector metadata.name doesn't match requested name"),
        customFails("fieldSelector on another field",
                    "/namespaces/ns/pods/*/m?fieldSelector=status.phase%3DRunning", 400,
                    "fieldSelector metadata.name doesn't match requested name")));

INSTANTIATE_TEST_SUITE_P(
    External, RouterTest,
    ::testing::Values(Row{"resource list", "GET", kEm, "v1beta1",
                          "/apis/external.metrics.k8s.io/v1beta1", 200, "", K::kResourceList},
                      Row{"metric in a namespace", "GET", kEm, "v1beta1",
                          "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/"
                          "queue_depth?labelSelector=topic%3Dt1",
                          200, "", K::kExternalMetric, "ns", "", "", "queue_depth", false},
                      Row{"metric without namespace is 404", "GET", kEm, "v1beta1",
                          "/apis/external.metrics.k8s.io/v1beta1/queue_depth", 404, kNotFound},
                      Row{"extra part is 404", "GET", kEm, "v1beta1",
                          "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/q/x", 404,
                          kNotFound},
                      Row{"PUT is 405", "PUT", kEm, "v1beta1",
                          "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/q", 405,
                          kNotAllowed}));

TEST(RouterSelectors, ParsesSelectorsOfCustomRequests) {
  const auto route = routeMetricsApi(
      "GET", kCm, "v1beta2", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/pods/*/m",
      QueryParams::parse("labelSelector=app%3Dweb&metricLabelSelector=verb%20in%20(GET,PUT)"));
  ASSERT_TRUE(route.ok()) << route.status().toString();
  EXPECT_EQ(route->request.labelSelector, "app=web");
  EXPECT_EQ(route->request.metricLabelSelector, "verb in (GET,PUT)");
  EXPECT_EQ(route->request.objectSelector.toString(), "app=web");
  EXPECT_EQ(route->request.metricSelector.toString(), "verb in (GET,PUT)");
}

TEST(RouterSelectors, ExternalLabelSelectorSelectsMetricLabels) {
  const auto route =
      routeMetricsApi("GET", kEm, "v1beta1", "/apis/external.metrics.k8s.io/v1beta1/namespaces/n/q",
                      QueryParams::parse("labelSelector=topic%3Dt1"));
  ASSERT_TRUE(route.ok());
  EXPECT_EQ(route->request.metricSelector.toString(), "topic=t1");
  EXPECT_TRUE(route->request.objectSelector.empty());
}

struct BadSelectorRow {
  const char* what;
  const char* group;
  const char* path;
  const char* query;
};

class BadSelectorTest : public ::testing::TestWithParam<BadSelectorRow> {};

TEST_P(BadSelectorTest, IsBadRequest) {
  const auto& row = GetParam();
  const std::string version = "v1beta1";
  const auto route =
      routeMetricsApi("GET", row.group, version, row.path, QueryParams::parse(row.query));
  ASSERT_FALSE(route.ok()) << row.what;
  EXPECT_EQ(route.status().httpCode(), 400) << row.what;
  EXPECT_EQ(route.status().reason(), "BadRequest") << row.what;
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadSelectorTest,
    ::testing::Values(BadSelectorRow{"labelSelector with a bad operator", kCm,
                                     "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/*/m",
                                     "labelSelector=a%3D%3D%3Db"},
                      BadSelectorRow{"labelSelector on a named object is parsed too", kCm,
                                     "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/p/m",
                                     "labelSelector=in%20in%20in"},
                      BadSelectorRow{"metricLabelSelector with an invalid value", kCm,
                                     "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/p/m",
                                     "metricLabelSelector=a%3D%22x%22"},
                      BadSelectorRow{"external labelSelector with an unclosed set", kEm,
                                     "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/q",
                                     "labelSelector=a%20in%20(x"}));

TEST(GroupResource, ParsesAtFirstDot) {
  EXPECT_EQ(GroupResource::parse("deployments.apps"), (GroupResource{"apps", "deployments"}));
  EXPECT_EQ(GroupResource::parse("pods"), (GroupResource{"", "pods"}));
  EXPECT_EQ(GroupResource::parse("foos.example.com").group, "example.com");
  EXPECT_EQ(GroupResource::parse("foos.example.com").toString(), "foos.example.com");
}

}  // namespace router_test
}  // namespace gpuscale::apiserver
