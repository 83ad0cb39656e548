#include <gtest/gtest.h>

#include "gpuscale/apiserver/metric_request.h"

namespace gpuscale::apiserver {
namespace {

struct Row {
  const char* what;
  const char* method;
  const char* group;
  const char* version;
  const char* target;   // decoded path + optional ?query
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

INSTANTIATE_TEST_SUITE_P(
    Custom, RouterTest,
    ::testing::Values(
        Row{"version root is the resource list", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1", 200, "", K::kResourceList},
        Row{"version root with trailing slash", "GET", kCm, "v1beta2",
            "/apis/custom.metrics.k8s.io/v1beta2/", 200, "", K::kResourceList},
        Row{"root-scoped named object", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/nodes/n1/m", 200, "", K::kCustomMetric, "",
            "nodes", "n1", "m", false},
        Row{"root-scoped wildcard", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/persistentvolumes/*/m?labelSelector=a%3Db", 200,
            "", K::kCustomMetric, "", "persistentvolumes", "*", "m", true},
        Row{"namespaced named object with group", "GET", kCm, "v1beta2",
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/deployments.apps/web/m", 200, "",
            K::kCustomMetric, "ns", "deployments.apps", "web", "m", false},
        Row{"namespaced wildcard (HPA pods metric)", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/"
            "avg_time_queue_us?labelSelector=app%3Dtriton",
            200, "", K::kCustomMetric, "default", "pods", "*", "avg_time_queue_us", true},
        Row{"namespace's own metric is rewritten to namespaces/{ns}", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns1/metrics/foo", 200, "",
            K::kCustomMetric, "", "namespaces", "ns1", "foo", false},
        Row{"all namespaces' metric", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/*/metrics/foo?labelSelector=team", 200,
            "", K::kCustomMetric, "", "namespaces", "*", "foo", true},
        Row{"fieldSelector naming the object is accepted", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/p1/"
            "m?fieldSelector=metadata.name%"
            "3Dp1",
            200, "", K::kCustomMetric, "ns", "pods", "p1", "m", false},
        Row{"fieldSelector with == is accepted", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/nodes/n1/m?fieldSelector=metadata.name%3D%3Dn1",
            200, "", K::kCustomMetric, "", "nodes", "n1", "m", false},
        Row{"other list options are ignored", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/nodes/n1/m?limit=5&watch=true&selector=x", 200, "",
            K::kCustomMetric, "", "nodes", "n1", "m", false},
        Row{"namespace status subresource is a root-scoped namespace metric", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/status", 200, "", K::kCustomMetric,
            "", "namespaces", "ns", "status", false},
        // Errors.
        Row{"/namespaces/ns/metrics is an invalid path", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/metrics", 400,
            "invalid request path"},
        Row{"/namespaces/ns/foo is an invalid path", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/foo", 400, "invalid request path"},
        Row{"two parts match no route", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/a/b", 404, kNotFound},
        Row{"one part matches no route", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/a", 404, kNotFound},
        Row{"four parts outside namespaces/x/metrics", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/p", 404, kNotFound},
        Row{"six parts", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/p/m/x", 404, kNotFound},
        Row{"empty inner part", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/nodes//m", 404, kNotFound},
        Row{"trailing slash on an object path", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/nodes/n/m/", 404, kNotFound},
        Row{"POST on a metric is 405", "POST", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/nodes/n1/m", 405, kNotAllowed},
        Row{"DELETE on the resource list is 405", "DELETE", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1", 405, kNotAllowed},
        Row{"POST on an unroutable path is 404", "POST", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/a/b", 404, kNotFound},
        Row{"fieldSelector naming another object", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/p1/"
            "m?fieldSelector=metadata.name%"
            "3Dp2",
            400, "fieldSelector metadata.name doesn't match requested name"},
        Row{"fieldSelector on another field", "GET", kCm, "v1beta1",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/pods/*/m?fieldSelector=status.phase%"
            "3DRunning",
            400, "fieldSelector metadata.name doesn't match requested name"}));

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

}  // namespace
}  // namespace gpuscale::apiserver
