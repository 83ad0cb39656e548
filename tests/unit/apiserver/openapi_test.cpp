#include "gpuscale/apiserver/openapi.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <tuple>

namespace gpuscale::apiserver {
namespace openapi_test {

using Json = nlohmann::json;

const std::vector<GroupVersion> kAll = {{"custom.metrics.k8s.io", "v1beta1"},
                                        {"custom.metrics.k8s.io", "v1beta2"},
                                        {"external.metrics.k8s.io", "v1beta1"},
                                        {"metrics.k8s.io", "v1beta1"}};

constexpr char kCustomList1[] = "io.k8s.metrics.pkg.apis.custom_metrics.v1beta1.MetricValueList";
constexpr char kCustomList2[] = "io.k8s.metrics.pkg.apis.custom_metrics.v1beta2.MetricValueList";
constexpr char kExternalList[] =
    "io.k8s.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValueList";
constexpr char kPodMetricsList[] = "io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetricsList";

// Every "$ref" in `doc` names a schema under `prefix` that the document defines.
void expectRefsResolve(const Json& doc, const std::string& prefix, const Json& schemas) {
  std::function<void(const Json&)> walk = [&](const Json& node) {
    if (node.is_object()) {
      if (node.contains("$ref")) {
        const std::string target = node["$ref"];
        ASSERT_EQ(target.rfind(prefix, 0), 0u) << target;
        EXPECT_TRUE(schemas.contains(target.substr(prefix.size()))) << target;
      }
      for (const auto& [key, child] : node.items()) walk(child);
    } else if (node.is_array()) {
      for (const auto& child : node) walk(child);
    }
  };
  walk(doc);
}

HttpRequest get(std::string path, std::vector<Header> headers = {}) {
  HttpRequest request;
  request.method = "GET";
  const size_t query = path.find('?');
  if (query != std::string::npos) request.rawQuery = path.substr(query + 1);
  request.path = path.substr(0, query);
  request.headers = std::move(headers);
  return request;
}

struct DefinitionRow {
  const char* what;
  const char* name;
  std::vector<std::string> required;
};

class V2DefinitionTest : public ::testing::TestWithParam<DefinitionRow> {};

TEST_P(V2DefinitionTest, IsDefinedWithItsRequiredFields) {
  const auto& row = GetParam();
  const Json doc = Json::parse(openApiV2Json(kAll));
  ASSERT_TRUE(doc["definitions"].contains(row.name)) << row.what;
  const Json& definition = doc["definitions"][row.name];
  EXPECT_EQ(definition.value("required", std::vector<std::string>{}), row.required) << row.what;
}

INSTANTIATE_TEST_SUITE_P(
    Definitions, V2DefinitionTest,
    ::testing::Values(
        DefinitionRow{"custom v1beta1 list", kCustomList1, {"items"}},
        DefinitionRow{"custom v1beta1 item",
                      "io.k8s.metrics.pkg.apis.custom_metrics.v1beta1.MetricValue",
                      {"describedObject", "metricName", "timestamp", "value"}},
        DefinitionRow{"custom v1beta2 list", kCustomList2, {"items"}},
        DefinitionRow{"custom v1beta2 item",
                      "io.k8s.metrics.pkg.apis.custom_metrics.v1beta2.MetricValue",
                      {"describedObject", "metric", "timestamp", "value"}},
        DefinitionRow{"external list", kExternalList, {"items"}},
        DefinitionRow{"external item",
                      "io.k8s.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValue",
                      {"metricName", "metricLabels", "timestamp", "value"}},
        DefinitionRow{"list metadata", "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", {}},
        DefinitionRow{"described object", "io.k8s.api.core.v1.ObjectReference", {}},
        DefinitionRow{"quantity", "io.k8s.apimachinery.pkg.api.resource.Quantity", {}},
        DefinitionRow{"label selector", "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector", {}},
        DefinitionRow{"selector requirement",
                      "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
                      {"key", "operator"}},
        DefinitionRow{"pod metrics list", kPodMetricsList, {"items"}},
        DefinitionRow{"pod metrics",
                      "io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics",
                      {"timestamp", "window", "containers"}},
        DefinitionRow{"container metrics",
                      "io.k8s.metrics.pkg.apis.metrics.v1beta1.ContainerMetrics",
                      {"name", "usage"}},
        DefinitionRow{"node metrics list",
                      "io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetricsList",
                      {"items"}},
        DefinitionRow{"node metrics",
                      "io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics",
                      {"timestamp", "window", "usage"}},
        DefinitionRow{"object metadata", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", {}},
        DefinitionRow{"duration", "io.k8s.apimachinery.pkg.apis.meta.v1.Duration", {}}));

TEST(OpenApiTest, V2IsSwaggerWithResolvableRefsAndGroupVersionKinds) {
  const Json doc = Json::parse(openApiV2Json(kAll));
  EXPECT_EQ(doc["swagger"], "2.0");
  expectRefsResolve(doc, "#/definitions/", doc["definitions"]);
  EXPECT_EQ(doc["definitions"][kCustomList2]["x-kubernetes-group-version-kind"],
            Json::parse(R"([{"group":"custom.metrics.k8s.io","kind":"MetricValueList",
                             "version":"v1beta2"}])"));
  EXPECT_TRUE(doc["paths"].contains(
      "/apis/external.metrics.k8s.io/v1beta1/namespaces/{namespace}/{metric}"));
  EXPECT_TRUE(doc["paths"].contains(
      "/apis/custom.metrics.k8s.io/v1beta1/namespaces/{namespace}/{resource}/{name}/{metric}"));
}

TEST(OpenApiTest, ResourceMetricsPathsNameTheirKinds) {
  const Json doc = Json::parse(openApiV2Json(kAll));
  const std::string prefix = "/apis/metrics.k8s.io/v1beta1";
  const std::vector<std::tuple<std::string, std::string, std::string>> rows = {
      {"/nodes", "list", "NodeMetricsList"},
      {"/nodes/{name}", "get", "NodeMetrics"},
      {"/pods", "list", "PodMetricsList"},
      {"/namespaces/{namespace}/pods", "list", "PodMetricsList"},
      {"/namespaces/{namespace}/pods/{name}", "get", "PodMetrics"}};
  for (const auto& [path, action, kind] : rows) {
    ASSERT_TRUE(doc["paths"].contains(prefix + path)) << path;
    const Json& get = doc["paths"][prefix + path]["get"];
    EXPECT_EQ(get["x-kubernetes-action"], action) << path;
    EXPECT_EQ(get["x-kubernetes-group-version-kind"]["kind"], kind) << path;
    EXPECT_EQ(get["responses"]["200"]["schema"]["$ref"],
              "#/definitions/io.k8s.metrics.pkg.apis.metrics.v1beta1." + kind)
        << path;
  }
  EXPECT_EQ(doc["paths"][prefix + "/pods"]["get"]["operationId"],
            "listMetricsV1beta1PodMetricsForAllNamespaces");
  EXPECT_EQ(doc["definitions"][kPodMetricsList]["x-kubernetes-group-version-kind"],
            Json::parse(R"([{"group":"metrics.k8s.io","kind":"PodMetricsList",
                             "version":"v1beta1"}])"));
}

TEST(OpenApiTest, OnlyServedGroupsAreDescribed) {
  const Json doc =
      Json::parse(openApiV2Json(std::vector<GroupVersion>{{"custom.metrics.k8s.io", "v1beta1"}}));
  EXPECT_TRUE(doc["definitions"].contains(kCustomList1));
  EXPECT_FALSE(doc["definitions"].contains(kCustomList2));
  EXPECT_FALSE(doc["definitions"].contains(kExternalList));
}

TEST(OpenApiTest, V3DocumentsAreSelfContainedPerGroupVersion) {
  for (const GroupVersion& gv : kAll) {
    const Json doc = Json::parse(openApiV3Json(gv));
    EXPECT_EQ(doc["openapi"], "3.0.0");
    const Json& schemas = doc["components"]["schemas"];
    expectRefsResolve(doc, "#/components/schemas/", schemas);
    EXPECT_FALSE(doc["paths"].empty()) << gv.group << "/" << gv.version;
    for (const auto& [path, item] : doc["paths"].items()) {
      for (const Json& parameter : item["parameters"]) {
        EXPECT_TRUE(parameter.contains("schema")) << path;
        EXPECT_FALSE(parameter.contains("type")) << path;
      }
    }
  }
  const Json external = Json::parse(openApiV3Json(kAll[2]));
  EXPECT_TRUE(external["components"]["schemas"].contains(kExternalList));
  EXPECT_FALSE(external["components"]["schemas"].contains(kCustomList1));
}

TEST(OpenApiTest, V3RootListsEachGroupVersionWithItsHash) {
  OpenApiDocuments documents(kAll);
  const auto root = documents.answer(get("/openapi/v3"));
  ASSERT_TRUE(root);
  const Json paths = Json::parse(root->body)["paths"];
  ASSERT_EQ(paths.size(), kAll.size());
  const std::string url = paths["apis/custom.metrics.k8s.io/v1beta2"]["serverRelativeURL"];
  ASSERT_EQ(url.rfind("/openapi/v3/apis/custom.metrics.k8s.io/v1beta2?hash=", 0), 0u) << url;

  const auto byHash = documents.answer(get(url));
  ASSERT_TRUE(byHash);
  EXPECT_EQ(byHash->status, 200);
  EXPECT_EQ(byHash->contentType, "application/json");
  EXPECT_EQ(*documents.body("/openapi/v3/apis/custom.metrics.k8s.io/v1beta2"), byHash->body);
  const Header immutable{"Cache-Control", "public, immutable"};
  EXPECT_NE(std::find(byHash->headers.begin(), byHash->headers.end(), immutable),
            byHash->headers.end());
}

struct AnswerRow {
  const char* what;
  HttpRequest request;
  int status;  // 0: not an OpenAPI path
};

class OpenApiAnswerTest : public ::testing::TestWithParam<AnswerRow> {};

TEST_P(OpenApiAnswerTest, Answers) {
  const auto& row = GetParam();
  OpenApiDocuments documents(std::vector<GroupVersion>{{"custom.metrics.k8s.io", "v1beta1"}});
  const auto response = documents.answer(row.request);
  if (row.status == 0) {
    EXPECT_FALSE(response) << row.what;
    return;
  }
  ASSERT_TRUE(response) << row.what;
  EXPECT_EQ(response->status, row.status) << row.what;
}

INSTANTIATE_TEST_SUITE_P(
    Table, OpenApiAnswerTest,
    ::testing::Values(AnswerRow{"v2 as kube-aggregator asks",
                                get("/openapi/v2", {{"Accept", "application/json"}}), 200},
                      AnswerRow{"no Accept", get("/openapi/v3"), 200},
                      AnswerRow{
                          "protobuf only is not served",
                          get("/openapi/v2", {{"Accept",
                                               "application/com.github.proto-openapi.spec.v2@v1.0+"
                                               "protobuf"}}),
                          406},
                      AnswerRow{"a group-version not served", get("/openapi/v3/apis/apps/v1"), 404},
                      AnswerRow{"external not served here",
                                get("/openapi/v3/apis/external.metrics.k8s.io/v1beta1"), 404},
                      AnswerRow{"not an OpenAPI path", get("/openapi"), 0},
                      AnswerRow{"not an OpenAPI path either", get("/openapi/v22"), 0}));

TEST(OpenApiTest, ETagsAnswer304) {
  OpenApiDocuments documents(kAll);
  const auto first = documents.answer(get("/openapi/v2"));
  ASSERT_TRUE(first);
  std::string etag;
  for (const auto& [name, value] : first->headers) {
    if (name == "Etag") etag = value;
  }
  ASSERT_EQ(etag.size(), 2u + 128u) << "a quoted hex SHA-512";
  const auto again = documents.answer(get("/openapi/v2", {{"If-None-Match", etag}}));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  EXPECT_TRUE(again->body.empty());
  const auto other = documents.answer(get("/openapi/v2", {{"If-None-Match", "\"other\""}}));
  EXPECT_EQ(other->status, 200);
}

}  // namespace openapi_test
}  // namespace gpuscale::apiserver
