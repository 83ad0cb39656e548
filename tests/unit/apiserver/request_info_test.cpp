#include "gpuscale/apiserver/request_info.h"

#include <gtest/gtest.h>

namespace gpuscale::apiserver {
namespace {

struct Row {
  const char* what;
  const char* method;
  const char* target;  // path?query (path already decoded)
  bool resource;
  const char* verb;
  const char* group;
  const char* version;
  const char* ns;
  const char* res;
  const char* name;
  const char* sub;
};

class RequestInfoTest : public ::testing::TestWithParam<Row> {};

TEST_P(RequestInfoTest, MatchesKubernetes) {
  const Row& row = GetParam();
  std::string_view target = row.target;
  const size_t q = target.find('?');
  const auto query = QueryParams::parse(q == std::string_view::npos ? "" : target.substr(q + 1));
  const RequestInfo info = parseRequestInfo(row.method, target.substr(0, q), query);
  EXPECT_EQ(info.isResourceRequest, row.resource) << row.what;
  EXPECT_EQ(info.verb, row.verb) << row.what;
  EXPECT_EQ(info.apiGroup, row.group) << row.what;
  EXPECT_EQ(info.apiVersion, row.version) << row.what;
  EXPECT_EQ(info.namespaceName, row.ns) << row.what;
  EXPECT_EQ(info.resource, row.res) << row.what;
  EXPECT_EQ(info.name, row.name) << row.what;
  EXPECT_EQ(info.subresource, row.sub) << row.what;
}

constexpr const char* kCm = "/apis/custom.metrics.k8s.io/v1beta1";

INSTANTIATE_TEST_SUITE_P(
    Table, RequestInfoTest,
    ::testing::Values(
        Row{"wildcard pods metric: get with name *", "GET",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/http_requests", true,
            "get", "custom.metrics.k8s.io", "v1beta1", "default", "pods", "*", "http_requests"},
        Row{"v1beta2 named object", "GET",
            "/apis/custom.metrics.k8s.io/v1beta2/namespaces/ns/deployments.apps/web/m", true, "get",
            "custom.metrics.k8s.io", "v1beta2", "ns", "deployments.apps", "web", "m"},
        Row{"namespace metric is resource metrics, name = metric", "GET",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns1/metrics/foo", true, "get",
            "custom.metrics.k8s.io", "v1beta1", "ns1", "metrics", "foo", ""},
        Row{"root-scoped node metric", "GET", "/apis/custom.metrics.k8s.io/v1beta1/nodes/n1/cpu_x",
            true, "get", "custom.metrics.k8s.io", "v1beta1", "", "nodes", "n1", "cpu_x"},
        Row{"external metric is a list", "GET",
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/queue_depth", true, "list",
            "external.metrics.k8s.io", "v1beta1", "ns", "queue_depth", "", ""},
        Row{"external with watch=true is a watch", "GET",
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/q?watch=true", true, "watch",
            "external.metrics.k8s.io", "v1beta1", "ns", "q", "", ""},
        Row{"fieldSelector metadata.name names a list", "GET",
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/q?fieldSelector=metadata.name%3Dx",
            true, "list", "external.metrics.k8s.io", "v1beta1", "ns", "q", "x", ""},
        Row{"discovery of a version is non-resource", "GET", kCm, false, "get", "", "", "", "", "",
            ""},
        Row{"group discovery is non-resource", "GET", "/apis/custom.metrics.k8s.io", false, "get",
            "", "", "", "", "", ""},
        Row{"/apis is non-resource", "GET", "/apis", false, "get", "", "", "", "", "", ""},
        Row{"/metrics is non-resource", "GET", "/metrics", false, "get", "", "", "", "", "", ""},
        Row{"healthz with POST keeps the method as verb", "POST", "/healthz", false, "post", "", "",
            "", "", "", ""},
        Row{"POST on a resource is create", "POST",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/m", true, "create",
            "custom.metrics.k8s.io", "v1beta1", "default", "pods", "*", "m"},
        Row{"DELETE without name is deletecollection", "DELETE",
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/q", true, "deletecollection",
            "external.metrics.k8s.io", "v1beta1", "ns", "q", "", ""},
        Row{"namespaces list itself", "GET", "/api/v1/namespaces", true, "list", "", "v1", "",
            "namespaces", "", ""},
        Row{"a namespace object", "GET", "/api/v1/namespaces/ns", true, "get", "", "v1", "ns",
            "namespaces", "ns", ""},
        Row{"namespace status subresource", "GET", "/api/v1/namespaces/ns/status", true, "get", "",
            "v1", "ns", "namespaces", "ns", "status"},
        Row{"unknown prefix is non-resource", "GET", "/foo/bar/baz/qux", false, "get", "", "", "",
            "", "", ""}));

TEST(SplitPath, TrimsOuterSlashesKeepsInnerEmptyParts) {
  EXPECT_EQ(splitPath("/a/b/c/"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(splitPath("/a//b"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_TRUE(splitPath("/").empty());
  EXPECT_TRUE(splitPath("").empty());
}

}  // namespace
}  // namespace gpuscale::apiserver
