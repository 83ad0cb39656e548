#include "gpuscale/apiserver/wire_format.h"

#include <gtest/gtest.h>

namespace gpuscale::apiserver {
namespace wire_format_test {

const Timestamp kMay1{std::chrono::seconds(1714557600)};  // 2024-05-01T10:00:00Z

core::LabelSelector selector(std::string_view text) {
  auto parsed = core::LabelSelector::parse(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.valueOr({});
}

MetricValue podValue(std::optional<core::LabelSelector> metricSelector = std::nullopt) {
  MetricValue value;
  value.describedObject = {"Pod", "default", "web-1", "/v1"};
  value.metricName = "http_requests";
  value.timestamp = kMay1;
  value.value = core::Quantity::fromMilli(500);
  value.selector = std::move(metricSelector);
  return value;
}

// The MetricValueList of `values` in `version`, as served (compact JSON and a newline); "" after
// failing the test when it cannot be built.
std::string valueListText(const std::string& version, const std::vector<MetricValue>& values) {
  auto json = metricValueListJson(version, values);
  EXPECT_TRUE(json.ok()) << json.status().toString();
  return json.ok() ? encodeJson(*json, false) : "";
}

TEST(WireFormat, ResourceListMatchesReference) {
  const std::vector<CustomMetricInfo> metrics = {{{"", "pods"}, true, "http_requests"},
                                                 {{"", "namespaces"}, false, "http_requests"},
                                                 {{"apps", "deployments"}, true, "http_requests"}};
  EXPECT_EQ(
      encodeJson(customResourceListJson("v1beta1", metrics), false),
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"custom.metrics.k8s.io/v1beta1","resources":[{"name":"pods/http_requests","singularName":"","namespaced":true,"kind":"MetricValueList","verbs":["get"]},{"name":"namespaces/http_requests","singularName":"","namespaced":false,"kind":"MetricValueList","verbs":["get"]},{"name":"deployments.apps/http_requests","singularName":"","namespaced":true,"kind":"MetricValueList","verbs":["get"]}]})"
      "\n");
}

TEST(WireFormat, EmptyResourceListIsAnEmptyArray) {
  EXPECT_EQ(
      encodeJson(customResourceListJson("v1beta2", {}), false),
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"custom.metrics.k8s.io/v1beta2","resources":[]})"
      "\n");
}

TEST(WireFormat, ExternalResourceListMatchesReference) {
  EXPECT_EQ(
      encodeJson(externalResourceListJson({{"queue_depth"}}), false),
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"external.metrics.k8s.io/v1beta1","resources":[{"name":"queue_depth","singularName":"","namespaced":true,"kind":"ExternalMetricValueList","verbs":["get"]}]})"
      "\n");
  // A `namespaced: false` rule's metric (prometheus-adapter would still say true).
  EXPECT_EQ(
      encodeJson(externalResourceListJson({{"cluster_load", false}}), false),
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"external.metrics.k8s.io/v1beta1","resources":[{"name":"cluster_load","singularName":"","namespaced":false,"kind":"ExternalMetricValueList","verbs":["get"]}]})"
      "\n");
}

TEST(WireFormat, MetricValueListV1beta1MatchesReference) {
  EXPECT_EQ(
      valueListText("v1beta1", {podValue()}),
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta1","metadata":{},"items":[{"describedObject":{"kind":"Pod","namespace":"default","name":"web-1","apiVersion":"/v1"},"metricName":"http_requests","timestamp":"2024-05-01T10:00:00Z","value":"500m","selector":null}]})"
      "\n");
}

TEST(WireFormat, MetricValueListV1beta2MatchesReference) {
  EXPECT_EQ(
      valueListText("v1beta2", {podValue()}),
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta2","metadata":{},"items":[{"describedObject":{"kind":"Pod","namespace":"default","name":"web-1","apiVersion":"/v1"},"metric":{"name":"http_requests","selector":null},"timestamp":"2024-05-01T10:00:00Z","value":"500m"}]})"
      "\n");
}

TEST(WireFormat, EmptyMetricValueListHasEmptyItems) {
  EXPECT_EQ(
      valueListText("v1beta1", {}),
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta1","metadata":{},"items":[]})"
      "\n");
}

TEST(WireFormat, NamespaceObjectHasNoNamespaceAndWindowIsKept) {
  MetricValue value = podValue();
  value.describedObject = {"Namespace", "", "ns1", "/v1"};
  value.windowSeconds = 30;
  value.value = core::Quantity::fromMilli(1'000'000);
  EXPECT_EQ(
      valueListText("v1beta1", {value}),
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta1","metadata":{},"items":[{"describedObject":{"kind":"Namespace","name":"ns1","apiVersion":"/v1"},"metricName":"http_requests","timestamp":"2024-05-01T10:00:00Z","window":30,"value":"1k","selector":null}]})"
      "\n");
  EXPECT_EQ(
      valueListText("v1beta2", {value}),
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta2","metadata":{},"items":[{"describedObject":{"kind":"Namespace","name":"ns1","apiVersion":"/v1"},"metric":{"name":"http_requests","selector":null},"timestamp":"2024-05-01T10:00:00Z","windowSeconds":30,"value":"1k"}]})"
      "\n");
}

struct SelectorRow {
  const char* what;
  const char* text;
  const char* json;  // expected, or the plain error message when `error`
  bool error = false;
};

class SelectorJsonTest : public ::testing::TestWithParam<SelectorRow> {};

TEST_P(SelectorJsonTest, AsParseToLabelSelector) {
  const auto& row = GetParam();
  const auto json = labelSelectorJson(selector(row.text));
  if (row.error) {
    ASSERT_FALSE(json.ok()) << row.what;
    EXPECT_EQ(json.status().httpCode(), 500) << row.what;
    EXPECT_EQ(json.status().reason(), "") << row.what;
    EXPECT_EQ(json.status().message(), row.json) << row.what;
    return;
  }
  ASSERT_TRUE(json.ok()) << row.what;
  EXPECT_EQ(json->dump(), row.json) << row.what;
}

INSTANTIATE_TEST_SUITE_P(
    Table, SelectorJsonTest,
    ::testing::Values(
        SelectorRow{"equality goes to matchLabels", "verb=GET",
                    R"({"matchLabels":{"verb":"GET"}})"},
        SelectorRow{"== too, keys sorted", "z==1,a=2", R"({"matchLabels":{"a":"2","z":"1"}})"},
        SelectorRow{"in goes to matchExpressions", "k in (b,a)",
                    R"({"matchExpressions":[{"key":"k","operator":"In","values":["a","b"]}]})"},
        SelectorRow{"exists has no values", "k",
                    R"({"matchExpressions":[{"key":"k","operator":"Exists"}]})"},
        SelectorRow{
            "mixed", "a=1,!b,c notin (x)",
            R"({"matchLabels":{"a":"1"},"matchExpressions":[{"key":"b","operator":"DoesNotExist"},{"key":"c","operator":"NotIn","values":["x"]}]})"},
        SelectorRow{"!= cannot be represented", "k!=v",
                    "\"!=\" is not a valid label selector operator", true},
        SelectorRow{"gt cannot be represented", "k>1", "\"gt\" isn't supported in label selectors",
                    true}));

TEST(WireFormat, ItemSelectorIsRendered) {
  auto v1 = metricValueListJson("v1beta1", {podValue(selector("verb=GET"))});
  auto v2 = metricValueListJson("v1beta2", {podValue(selector("verb=GET"))});
  ASSERT_TRUE(v1.ok() && v2.ok());
  EXPECT_NE(encodeJson(*v1, false).find(R"("selector":{"matchLabels":{"verb":"GET"}}}]})"),
            std::string::npos);
  EXPECT_NE(
      encodeJson(*v2, false)
          .find(R"("metric":{"name":"http_requests","selector":{"matchLabels":{"verb":"GET"}}})"),
      std::string::npos);
  EXPECT_FALSE(metricValueListJson("v1beta1", {podValue(selector("k!=v"))}).ok());
}

TEST(WireFormat, ExternalMetricValueListMatchesReference) {
  ExternalMetricValue labelled{
      "queue_depth", std::map<std::string, std::string>{{"topic", "t1"}, {"name", "orders"}}, kMay1,
      std::nullopt, core::Quantity::fromMilli(42'000)};
  ExternalMetricValue scalar{"queue_depth", std::nullopt, kMay1, std::nullopt,
                             core::Quantity::fromMilli(0)};
  ExternalMetricValue bare{"queue_depth", std::map<std::string, std::string>{}, kMay1, std::nullopt,
                           core::Quantity::fromMilli(1500)};
  EXPECT_EQ(
      encodeJson(externalMetricValueListJson({labelled}), false),
      R"({"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":[{"metricName":"queue_depth","metricLabels":{"name":"orders","topic":"t1"},"timestamp":"2024-05-01T10:00:00Z","value":"42"}]})"
      "\n");
  EXPECT_EQ(
      encodeJson(externalMetricValueListJson({scalar, bare}), false),
      R"({"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":[{"metricName":"queue_depth","metricLabels":null,"timestamp":"2024-05-01T10:00:00Z","value":"0"},{"metricName":"queue_depth","metricLabels":{},"timestamp":"2024-05-01T10:00:00Z","value":"1500m"}]})"
      "\n");
}

TEST(WireFormat, GroupDiscoveryMatchesReference) {
  const ApiGroupVersions custom{"custom.metrics.k8s.io", {"v1beta1"}, "v1beta1"};
  EXPECT_EQ(
      encodeJson(apiGroupJson(custom), false),
      R"({"kind":"APIGroup","apiVersion":"v1","name":"custom.metrics.k8s.io","versions":[{"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"}})"
      "\n");
  EXPECT_EQ(
      encodeJson(apiGroupListJson({custom}, ":6443"), false),
      R"({"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"custom.metrics.k8s.io","versions":[{"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"},"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":":6443"}]}]})"
      "\n");
}

TEST(WireFormat, VersionIsPrettyInVersionInfoOrder) {
  VersionInfo info;
  info.major = "1";
  info.minor = "0";
  info.gitVersion = "";
  info.platform = "";
  EXPECT_EQ(
      encodeJson(versionJson(info), true),
      "{\n  \"major\": \"1\",\n  \"minor\": \"0\",\n  \"gitVersion\": \"\",\n  \"gitCommit\": "
      "\"\",\n  \"gitTreeState\": \"\",\n  \"buildDate\": \"\",\n  \"goVersion\": \"\",\n  "
      "\"compiler\": \"\",\n  \"platform\": \"\"\n}");
}

struct EncodeRow {
  const char* what;
  std::string input;
  std::string compact;
};

class EncodeTest : public ::testing::TestWithParam<EncodeRow> {};

TEST_P(EncodeTest, EscapesLikeGo) {
  const auto& row = GetParam();
  Json document;
  document["m"] = row.input;
  EXPECT_EQ(encodeJson(document, false), "{\"m\":" + row.compact + "}\n") << row.what;
}

INSTANTIATE_TEST_SUITE_P(
    Table, EncodeTest,
    ::testing::Values(EncodeRow{"HTML characters", "<a&b>", R"("\u003ca\u0026b\u003e")"},
                      EncodeRow{"line separators", "a\xE2\x80\xA8z\xE2\x80\xA9",
                                R"("a\u2028z\u2029")"},
                      EncodeRow{"quotes and control characters", "\"\n\x01", R"("\"\n\u0001")"},
                      EncodeRow{"invalid UTF-8 becomes U+FFFD", "a\xFFz", "\"a\xEF\xBF\xBDz\""},
                      EncodeRow{"non-ASCII kept", "caf\xC3\xA9", "\"caf\xC3\xA9\""}));

// The direct encoders must write exactly what the JSON-tree path writes.
TEST(WireFormat, DirectEncodersMatchTheTreePath) {
  std::vector<MetricValue> items = {podValue(), podValue(selector("verb in (GET,PUT),zone=a"))};
  items[1].describedObject = {"Node", "", "n<1>&\"q\"\\\n\x01\xE2\x80\xA8\xC3\xA9\xFF", "/v1"};
  items[1].windowSeconds = 60;
  items[1].value = core::Quantity::fromMilli(-1500);
  items.push_back(podValue());
  items[2].describedObject = {"Deployment", "ns", "web", "apps/v1"};
  items[2].timestamp = kMay1 + std::chrono::hours(49) + std::chrono::milliseconds(1);
  for (const char* version : {"v1beta1", "v1beta2"}) {
    for (const bool pretty : {false, true}) {
      for (size_t n = 0; n <= items.size(); ++n) {
        const std::vector<MetricValue> some(items.begin(), items.begin() + static_cast<long>(n));
        const auto direct = encodeMetricValueList(version, some, pretty);
        const auto tree = metricValueListJson(version, some);
        ASSERT_TRUE(direct.ok() && tree.ok());
        EXPECT_EQ(*direct, encodeJson(*tree, pretty))
            << version << " pretty=" << pretty << " n=" << n;
      }
    }
  }
  EXPECT_FALSE(encodeMetricValueList("v1beta1", {podValue(selector("a!=b"))}, false).ok());

  const std::vector<ExternalMetricValue> external = {
      {"q<1>", std::map<std::string, std::string>{{"b&", "x\ty"}, {"a", ""}}, kMay1, 30,
       core::Quantity::fromMilli(42)},
      {"q", std::nullopt, kMay1, std::nullopt, core::Quantity::fromMilli(0)},
      {"q", std::map<std::string, std::string>{}, kMay1, std::nullopt,
       core::Quantity::fromMilli(1)}};
  for (const bool pretty : {false, true}) {
    EXPECT_EQ(encodeExternalMetricValueList(external, pretty),
              encodeJson(externalMetricValueListJson(external), pretty));
    EXPECT_EQ(encodeExternalMetricValueList({}, pretty),
              encodeJson(externalMetricValueListJson({}), pretty));
  }
}

TEST(WireFormat, PrettyIsTwoSpaceIndentWithoutNewline) {
  Json document;
  document["a"] = Json::object();
  document["b"] = Json::array({1});
  EXPECT_EQ(encodeJson(document, true), "{\n  \"a\": {},\n  \"b\": [\n    1\n  ]\n}");
}

TEST(WireFormat, TimestampsAreUtcSeconds) {
  EXPECT_EQ(formatTimestamp(kMay1 + std::chrono::milliseconds(999)), "2024-05-01T10:00:00Z");
  EXPECT_EQ(formatTimestamp(Timestamp{}), "1970-01-01T00:00:00Z");
}

}  // namespace wire_format_test
}  // namespace gpuscale::apiserver
