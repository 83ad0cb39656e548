#include "gpuscale/apiserver/request_info.h"

#include <gtest/gtest.h>

namespace gpuscale::apiserver {
namespace request_info_test {

struct Row {
  const char* what;
  const char* method;
  std::string target;  // path?query (path already decoded)
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

// A request for `rest` (the path after the group version, with an optional ?query) below
// /apis/`group`/`version` (/api/`version` for the core group ""), parsed as a resource request.
Row resourceRequest(const char* what, const char* method, const char* group, const char* version,
                    const std::string& rest, const char* verb, const char* ns, const char* res,
                    const char* name, const char* sub) {
  const std::string root = *group == '\0' ? std::string("/api/") + version
                                          : std::string("/apis/") + group + "/" + version;
  return {what, method, root + rest, true, verb, group, version, ns, res, name, sub};
}

// A request for `target` parsed as a non-resource request: only the verb is set.
Row nonResourceRequest(const char* what, const char* method, const char* target, const char* verb) {
  return {what, method, target, false, verb, "", "", "", "", "", ""};
}

constexpr const char* kCm = "custom.metrics.k8s.io";
constexpr const char* kEm = "external.metrics.k8s.io";

INSTANTIATE_TEST_SUITE_P(
    Table, RequestInfoTest,
    ::testing::Values(
        resourceRequest("wildcard pods metric: get with name *", "GET", kCm, "v1beta1",
                        "/namespaces/default/pods/*/http_requests", "get", "default", "pods", "*",
                        "http_requests"),
        resourceRequest("v1beta2 named object", "GET", kCm, "v1beta2",
                        "/namespaces/ns/deployments.apps/web/m", "get", "ns", "deployments.apps",
                        "web", "m"),
        resourceRequest("namespace metric is resource metrics, name = metric", "GET", kCm,
                        "v1beta1", "/namespaces/ns1/metrics/foo", "get", "ns1", "metrics", "foo",
                        ""),
        resourceRequest("root-scoped node metric", "GET", kCm, "v1beta1", "/nodes/n1/cpu_x", "get",
                        "", "nodes", "n1", "cpu_x"),
        resourceRequest("external metric is a list", "GET", kEm, "v1beta1",
                        "/namespaces/ns/queue_depth", "list", "ns", "queue_depth", "", ""),
        resourceRequest("external with watch=true is a watch", "GET", kEm, "v1beta1",
                        "/namespaces/ns/q?watch=true", "watch", "ns", "q", "", ""),
        resourceRequest("fieldSelector metadata.name names a list", "GET", kEm, "v1beta1",
                        "/namespaces/ns/q?fieldSelector=metadata.name%3Dx", "list", "ns", "q", "x",
                        ""),
        nonResourceRequest("discovery of a version is non-resource", "GET",
                           "/apis/custom.metrics.k8s.io/v1beta1", "get"),
        nonResourceRequest("group discovery is non-resource", "GET", "/apis/custom.metrics.k8s.io",
                           "get"),
        nonResourceRequest("/apis is non-resource", "GET", "/apis", "get"),
        nonResourceRequest("/metrics is non-resource", "GET", "/metrics", "get"),
        nonResourceRequest("healthz with POST keeps the method as verb", "POST", "/healthz",
                           "post"),
        resourceRequest("POST on a resource is create", "POST", kCm, "v1beta1",
                        "/namespaces/default/pods/*/m", "create", "default", "pods", "*", "m"),
        resourceRequest("DELETE without name is deletecollection", "DELETE", kEm, "v1beta1",
                        "/namespaces/ns/q", "deletecollection", "ns", "q", "", ""),
        resourceRequest("namespaces list itself", "GET", "", "v1", "/namespaces", "list", "",
                        "namespaces", "", ""),
        resourceRequest("a namespace object", "GET", "", "v1", "/namespaces/ns", "get", "ns",
                        "namespaces", "ns", ""),
        resourceRequest("namespace status subresource", "GET", "", "v1", "/namespaces/ns/status",
                        "get", "ns", "namespaces", "ns", "status"),
        nonResourceRequest("unknown prefix is non-resource", "GET", "/foo/bar/baz/qux", "get")));

TEST(SplitPath, TrimsOuterSlashesKeepsInnerEmptyParts) {
  EXPECT_EQ(splitPath("/a/b/c/"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(splitPath("/a//b"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_TRUE(splitPath("/").empty());
  EXPECT_TRUE(splitPath("").empty());
}

}  // namespace request_info_test
}  // namespace gpuscale::apiserver
