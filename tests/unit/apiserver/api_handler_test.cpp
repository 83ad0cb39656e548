#include "gpuscale/apiserver/api_handler.h"

#include <gtest/gtest.h>

#include <atomic>

#include "fakes/fake_metrics_provider.h"
#include "gpuscale/core/api_call_tally.h"

namespace gpuscale::apiserver {
namespace api_handler_test {

using testing::FakeCustomMetricsProvider;
using testing::FakeExternalMetricsProvider;

constexpr const char* kPrefix = "/apis/custom.metrics.k8s.io/v1beta1";

HttpRequest get(std::string target, std::vector<Header> headers = {}) {
  HttpRequest request;
  request.method = "GET";
  request.target = target;
  const size_t q = target.find('?');
  request.path = *decodePath(target.substr(0, q));
  if (q != std::string::npos) request.rawQuery = target.substr(q + 1);
  request.headers = std::move(headers);
  return request;
}

class ApiHandlerTest : public ::testing::Test {
 protected:
  ApiHandlerTest() {
    custom_ = std::make_shared<FakeCustomMetricsProvider>();
    const CustomMetricInfo pods{{"", "pods"}, true, "http_requests"};
    custom_->addValue({pods,
                       {"Pod", "default", "web-1", "/v1"},
                       {{"app", "web"}},
                       core::Quantity::fromMilli(500)});
    custom_->addValue({pods,
                       {"Pod", "default", "web-2", "/v1"},
                       {{"app", "web"}},
                       core::Quantity::fromMilli(4275)});
    custom_->addValue({pods,
                       {"Pod", "default", "db-1", "/v1"},
                       {{"app", "db"}},
                       core::Quantity::fromMilli(1000)});
    custom_->addValue({{{"", "namespaces"}, false, "http_requests"},
                       {"Namespace", "", "default", "/v1"},
                       {},
                       core::Quantity::fromMilli(399300)});
    custom_->addMetric({{"", "pods"}, true, "broken"});
    custom_->failMetric("broken", core::Status::internal("unable to fetch metrics"));
    external_ = std::make_shared<FakeExternalMetricsProvider>();
    external_->addSample({"queue_depth", "default",
                          std::map<std::string, std::string>{{"topic", "t1"}},
                          core::Quantity::fromMilli(42'000)});
    config_.customMetrics = custom_;
    config_.externalMetrics = external_;
    config_.serverAddress = ":6443";
  }

  ApiHandler& handler() {
    if (!handler_) handler_ = std::make_unique<ApiHandler>(config_);
    return *handler_;
  }

  HttpResponse call(std::string target, std::vector<Header> headers = {}) {
    return handler().handle(get(std::move(target), std::move(headers)));
  }

  // `target` is answered 200 with exactly the JSON `body` (and a newline); the response.
  HttpResponse expectServed(std::string target, const std::string& body) {
    HttpResponse response = call(std::move(target));
    EXPECT_EQ(response.status, 200);
    EXPECT_EQ(response.body, body + "\n");
    return response;
  }

  std::shared_ptr<FakeCustomMetricsProvider> custom_;
  std::shared_ptr<FakeExternalMetricsProvider> external_;
  ApiHandlerConfig config_;
  std::unique_ptr<ApiHandler> handler_;
};

TEST_F(ApiHandlerTest, WildcardPodsMetric) {
  const auto response = expectServed(
      std::string(kPrefix) + "/namespaces/default/pods/%2A/http_requests?labelSelector=app%3Dweb",
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta1","metadata":{},"items":[{"describedObject":{"kind":"Pod","namespace":"default","name":"web-1","apiVersion":"/v1"},"metricName":"http_requests","timestamp":"2024-05-01T10:00:00Z","value":"500m","selector":null},{"describedObject":{"kind":"Pod","namespace":"default","name":"web-2","apiVersion":"/v1"},"metricName":"http_requests","timestamp":"2024-05-01T10:00:00Z","value":"4275m","selector":null}]})");
  EXPECT_EQ(response.contentType, "application/json");
}

TEST_F(ApiHandlerTest, NamedObjectV1beta2WithMetricSelector) {
  expectServed(
      "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/db-1/"
      "http_requests?metricLabelSelector=verb%3DGET",
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta2","metadata":{},"items":[{"describedObject":{"kind":"Pod","namespace":"default","name":"db-1","apiVersion":"/v1"},"metric":{"name":"http_requests","selector":{"matchLabels":{"verb":"GET"}}},"timestamp":"2024-05-01T10:00:00Z","value":"1"}]})");
}

TEST_F(ApiHandlerTest, NamespaceMetricIsRewritten) {
  const auto response = call(std::string(kPrefix) + "/namespaces/default/metrics/http_requests");
  EXPECT_EQ(response.status, 200);
  EXPECT_NE(response.body.find(
                R"("describedObject":{"kind":"Namespace","name":"default","apiVersion":"/v1"})"),
            std::string::npos);
  EXPECT_NE(response.body.find(R"("value":"399300m")"), std::string::npos);
}

struct StatusRow {
  const char* what;
  const char* target;
  int code;
  const char* body;
};

class ApiHandlerStatusTest : public ApiHandlerTest,
                             public ::testing::WithParamInterface<StatusRow> {};

TEST_P(ApiHandlerStatusTest, ExactStatusBody) {
  const auto& row = GetParam();
  const auto response = call(row.target);
  EXPECT_EQ(response.status, row.code) << row.what;
  EXPECT_EQ(response.body, std::string(row.body) + "\n") << row.what;
}

INSTANTIATE_TEST_SUITE_P(
    Reference54, ApiHandlerStatusTest,
    ::testing::Values(
        StatusRow{
            "unknown metric", "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/nope",
            404,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the metric nope for pods","reason":"NotFound","code":404})"},
        StatusRow{
            "named object without data",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/web-9/http_requests", 404,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the metric http_requests for pods web-9","reason":"NotFound","code":404})"},
        StatusRow{
            "provider failure",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/broken", 500,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: unable to fetch metrics","reason":"InternalError","details":{"causes":[{"message":"unable to fetch metrics"}]},"code":500})"},
        StatusRow{
            "short path", "/apis/custom.metrics.k8s.io/v1beta1/namespaces/ns/metrics", 400,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid request path","reason":"BadRequest","code":400})"},
        StatusRow{
            "unroutable path under a prefix", "/apis/custom.metrics.k8s.io/v1beta1/a/b", 404,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404})"},
        StatusRow{
            "!= metric selector cannot be echoed",
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/web-1/"
            "http_requests?metricLabelSelector=verb%21%3DGET",
            500,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"\"!=\" is not a valid label selector operator","code":500})"},
        StatusRow{
            "unknown external metric",
            "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/nope", 404,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the metric nope for namespaces","reason":"NotFound","code":404})"}));

TEST_F(ApiHandlerTest, WrongMethodIs405Status) {
  HttpRequest request = get(std::string(kPrefix) + "/namespaces/default/pods/*/http_requests");
  request.method = "POST";
  const auto response = handler().handle(request);
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(
      response.body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405})"
      "\n");
}

TEST_F(ApiHandlerTest, BadLabelSelectorIs400) {
  const auto response = call(std::string(kPrefix) +
                             "/namespaces/default/pods/*/http_requests?labelSelector=a%3D%3D%3D");
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(response.body.find(R"("reason":"BadRequest","code":400})"), std::string::npos);
}

TEST_F(ApiHandlerTest, PathsOutsideThePrefixesArePlainText404) {
  for (const char* path : {"/foo", "/openapi/v3/apis/metrics.k8s.io/v1beta1",
                           "/apis/custom.metrics.k8s.io/v1beta3", "/apis/metrics.k8s.io/v1beta1"}) {
    const auto response = call(path);
    EXPECT_EQ(response.status, 404) << path;
    EXPECT_EQ(response.contentType, "text/plain; charset=utf-8") << path;
    EXPECT_EQ(response.body, "404 page not found\n") << path;
  }
}

TEST_F(ApiHandlerTest, OpenApiDocumentsAreServedAfterAuthorization) {
  const auto v2 = call("/openapi/v2", {{"Accept", "application/json"}});
  EXPECT_EQ(v2.status, 200);
  EXPECT_NE(
      v2.body.find("io.k8s.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValueList"),
      std::string::npos);
  const auto v3 = call("/openapi/v3");
  EXPECT_NE(v3.body.find("apis/custom.metrics.k8s.io/v1beta2"), std::string::npos);
}

TEST_F(ApiHandlerTest, ResourceListsComeFromTheProviders) {
  const auto custom = call("/apis/custom.metrics.k8s.io/v1beta2");
  EXPECT_EQ(custom.status, 200);
  EXPECT_NE(
      custom.body.find(
          R"("groupVersion":"custom.metrics.k8s.io/v1beta2","resources":[{"name":"pods/http_requests","singularName":"","namespaced":true)"),
      std::string::npos);
  EXPECT_NE(custom.body.find(
                R"({"name":"namespaces/http_requests","singularName":"","namespaced":false)"),
            std::string::npos);
  const auto external = call("/apis/external.metrics.k8s.io/v1beta1");
  EXPECT_EQ(
      external.body,
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"external.metrics.k8s.io/v1beta1","resources":[{"name":"queue_depth","singularName":"","namespaced":true,"kind":"ExternalMetricValueList","verbs":["get"]}]})"
      "\n");
}

TEST_F(ApiHandlerTest, EmptyRegistryStillAnswersDiscovery) {
  config_.customMetrics = std::make_shared<FakeCustomMetricsProvider>();
  const auto response = call(kPrefix);
  EXPECT_EQ(response.status, 200);
  EXPECT_NE(response.body.find(R"("resources":[])"), std::string::npos);
}

TEST_F(ApiHandlerTest, GroupDiscovery) {
  const auto list = call("/apis");
  EXPECT_EQ(
      list.body,
      R"({"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"custom.metrics.k8s.io","versions":[{"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"},"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":":6443"}]},{"name":"external.metrics.k8s.io","versions":[{"groupVersion":"external.metrics.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"external.metrics.k8s.io/v1beta1","version":"v1beta1"},"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":":6443"}]}]})"
      "\n");
  const auto group = call("/apis/custom.metrics.k8s.io");
  EXPECT_EQ(
      group.body,
      R"({"kind":"APIGroup","apiVersion":"v1","name":"custom.metrics.k8s.io","versions":[{"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"custom.metrics.k8s.io/v1beta1","version":"v1beta1"}})"
      "\n");
}

TEST_F(ApiHandlerTest, UnservedGroupIsNotListed) {
  config_.externalMetrics = nullptr;
  EXPECT_EQ(call("/apis").body.find("external.metrics.k8s.io"), std::string::npos);
  EXPECT_EQ(call("/apis/external.metrics.k8s.io/v1beta1").status, 404);
}

struct AcceptRow {
  const char* what;
  const char* accept;
  int code;
};

class AcceptTest : public ApiHandlerTest, public ::testing::WithParamInterface<AcceptRow> {};

TEST_P(AcceptTest, Negotiates) {
  const auto& row = GetParam();
  for (const char* path : {"/apis", kPrefix}) {
    EXPECT_EQ(call(path, {{"Accept", row.accept}}).status, row.code) << row.what << " " << path;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, AcceptTest,
    ::testing::Values(
        AcceptRow{
            "kube-aggregator's exact Accept (v2, then v2beta1, no plain JSON): 406, on which it "
            "falls back to /apis/<group>/<version> with application/json",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/"
            "json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
            406},
        AcceptRow{"aggregated with plain JSON fallback",
                  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList, "
                  "application/json",
                  200},
        AcceptRow{"kubectl's Accept", "application/json, */*", 200},
        AcceptRow{"client-go protobuf with */*", "application/vnd.kubernetes.protobuf, */*", 200},
        AcceptRow{"protobuf only", "application/vnd.kubernetes.protobuf", 406},
        AcceptRow{"application/*", "application/*", 200}, AcceptRow{"empty", "", 200}));

TEST_F(ApiHandlerTest, PrettyPrinting) {
  const std::string path = std::string(kPrefix) + "/namespaces/default/pods/web-1/http_requests";
  const auto pretty = call(path + "?pretty=true");
  EXPECT_EQ(pretty.body.substr(0, 31), "{\n  \"kind\": \"MetricValueList\",\n");
  EXPECT_NE(pretty.body.back(), '\n');
  EXPECT_EQ(call(path, {{"User-Agent", "curl/7.88.1"}}).body.substr(0, 2), "{\n");
  EXPECT_EQ(call(path, {{"User-Agent", "Mozilla/5.0 (X11)"}}).body.substr(0, 2), "{\n");
  EXPECT_EQ(call(path + "?pretty=false", {{"User-Agent", "curl/7.88.1"}}).body.substr(0, 2), "{\"");
  EXPECT_EQ(call(path + "?pretty=", {{"User-Agent", "curl/7.88.1"}}).body.substr(0, 2), "{\n");
  EXPECT_EQ(call(path, {{"User-Agent", "kubectl/v1.32"}}).body.substr(0, 2), "{\"");
  EXPECT_EQ(call(std::string(kPrefix) + "/a/b?pretty=1").body.substr(0, 2), "{\n");
}

TEST_F(ApiHandlerTest, ExternalMetric) {
  expectServed(
      "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/"
      "queue_depth?labelSelector=topic%3Dt1",
      R"({"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":[{"metricName":"queue_depth","metricLabels":{"topic":"t1"},"timestamp":"2024-05-01T10:00:00Z","value":"42"}]})");
  const auto none = call(
      "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/"
      "queue_depth?labelSelector=topic%3Dt2");
  EXPECT_EQ(none.status, 200);
  EXPECT_NE(none.body.find(R"("items":[])"), std::string::npos);
}

TEST_F(ApiHandlerTest, HealthEndpoints) {
  bool discovered = false;
  config_.health = std::make_shared<HealthChecks>();
  config_.health->add(
      "metrics-discovery",
      [&discovered] { return discovered ? core::Status() : core::Status::unavailable("not yet"); },
      HealthChecks::kReadyz);
  EXPECT_EQ(call("/healthz").body, "ok");
  EXPECT_EQ(call("/livez?verbose").body, "[+]ping ok\nlivez check passed\n");
  const auto notReady = call("/readyz");
  EXPECT_EQ(notReady.status, 500);
  EXPECT_EQ(
      notReady.body,
      "[+]ping ok\n[+]shutdown ok\n[-]metrics-discovery failed: reason withheld\nreadyz check "
      "failed\n");
  EXPECT_EQ(call("/readyz/metrics-discovery").body, "internal server error: not yet\n");
  EXPECT_EQ(call("/readyz?exclude=metrics-discovery&exclude=nope").body, "ok");
  EXPECT_EQ(
      call("/readyz?verbose&exclude=metrics-discovery&exclude=nope").body,
      "[+]ping ok\n[+]shutdown ok\n[+]metrics-discovery excluded: ok\nwarn: some health checks "
      "cannot be excluded: no matches for \"nope\"\nreadyz check passed\n");
  discovered = true;
  EXPECT_EQ(call("/readyz").status, 200);
  EXPECT_EQ(call("/healthz/ping").body, "ok");
  EXPECT_EQ(call("/healthz/metrics-discovery").status, 404);
  handler().health().beginShutdown();
  EXPECT_EQ(call("/readyz").status, 500);
  EXPECT_EQ(call("/livez").status, 200);
}

TEST_F(ApiHandlerTest, ReadinessWaitsForTheFirstDiscovery) {
  std::atomic<bool> finished{false};
  config_.discoveryFinished = [&finished] { return finished.load(); };
  EXPECT_EQ(call("/readyz").status, 500);
  EXPECT_EQ(call("/readyz/metrics-discovery").body,
            "internal server error: the first metrics discovery has not finished\n");
  EXPECT_EQ(call("/healthz").status, 200);
  EXPECT_EQ(call(kPrefix).status, 200);  // the aggregator's probe is answered regardless
  finished = true;
  EXPECT_EQ(call("/readyz").status, 200);
}

TEST_F(ApiHandlerTest, VersionAndRoot) {
  const auto version = call("/version");
  EXPECT_EQ(version.status, 200);
  EXPECT_EQ(version.body.substr(0, 18), "{\n  \"major\": \"0\",\n");
  const auto root = call("/");
  EXPECT_NE(root.body.find("\"/apis/custom.metrics.k8s.io/v1beta2\""), std::string::npos);
}

TEST_F(ApiHandlerTest, MetricsCountRequestsByRouteAndCode) {
  call(std::string(kPrefix) + "/namespaces/default/pods/*/http_requests");
  call(std::string(kPrefix) + "/namespaces/default/pods/*/nope");
  call("/nowhere");
  const auto metrics = call("/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.contentType, "text/plain; version=0.0.4; charset=utf-8");
  // The /metrics request itself is the one in flight.
  EXPECT_NE(metrics.body.find("gpuscale_apiserver_inflight_requests 1\n"), std::string::npos);
  EXPECT_NE(
      metrics.body.find(R"(gpuscale_apiserver_requests_total{code="200",route="custom_metric"} 1)"),
      std::string::npos)
      << metrics.body;
  EXPECT_NE(
      metrics.body.find(R"(gpuscale_apiserver_requests_total{code="404",route="custom_metric"} 1)"),
      std::string::npos);
  EXPECT_NE(
      metrics.body.find(R"(gpuscale_apiserver_requests_total{code="404",route="not_found"} 1)"),
      std::string::npos);
  EXPECT_NE(metrics.body.find("gpuscale_apiserver_request_duration_seconds_bucket{code=\"200\","
                              "route=\"custom_metric\",le=\"0.0005\"}"),
            std::string::npos);
}

TEST_F(ApiHandlerTest, SharedRegistryCarriesOtherModulesMetrics) {
  config_.registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge()
      .Name("gpuscale_other_module")
      .Help("x")
      .Register(*config_.registry)
      .Add({})
      .Set(7);
  EXPECT_NE(call("/metrics").body.find("gpuscale_other_module 7"), std::string::npos);
  const auto plain = handler().handleMetricsOnly(get("/metrics"));
  EXPECT_EQ(plain.status, 200);
  EXPECT_NE(plain.body.find("gpuscale_other_module 7"), std::string::npos);
  EXPECT_EQ(handler().handleMetricsOnly(get(kPrefix)).status, 404);
}

class DenyingAuthorizer final : public Authorizer {
 public:
  core::Result<AuthorizationDecision> authorize(const UserInfo&, const RequestInfo&) override {
    if (fail) return core::Status::unavailable("subjectaccessreviews unavailable");
    return AuthorizationDecision{false, reason};
  }
  bool fail = false;
  std::string reason;
};

class FixedUser final : public Authenticator {
 public:
  core::Result<UserInfo> authenticate(const HttpRequest& request) override {
    if (request.header("Authorization").value_or("") == "Bearer bad") {
      return core::Status::unauthorized();
    }
    return UserInfo{"u", "", {"g"}, {}};
  }
};

// An authenticator that costs `calls` kube-apiserver calls per request (a TokenReview, ...).
class CallingAuthenticator final : public Authenticator {
 public:
  core::Result<UserInfo> authenticate(const HttpRequest&) override {
    for (int i = 0; i < calls; ++i) core::ApiCallTally::note();
    return UserInfo{"u", "", {"g"}, {}};
  }
  int calls = 0;
};

TEST_F(ApiHandlerTest, KubeApiServerCallsAreCountedPerServedRequest) {
  auto authenticator = std::make_shared<CallingAuthenticator>();
  config_.authenticator = authenticator;
  const std::string wildcard = std::string(kPrefix) + "/namespaces/default/pods/*/http_requests";
  for (int calls : {2, 0, 0, 1}) {
    authenticator->calls = calls;
    EXPECT_EQ(call(wildcard).status, 200);
  }
  authenticator->calls = 0;
  const auto body = call("/metrics").body;
  for (const char* line :
       {R"(gpuscale_apiserver_kube_requests_per_request_count{route="custom_metric"} 4)",
        R"(gpuscale_apiserver_kube_requests_per_request_sum{route="custom_metric"} 3)",
        R"(gpuscale_apiserver_kube_requests_per_request_bucket{route="custom_metric",le="0"} 2)",
        R"(gpuscale_apiserver_kube_requests_per_request_bucket{route="custom_metric",le="1"} 3)"}) {
    EXPECT_NE(body.find(line), std::string::npos) << line << "\n" << body;
  }
}

TEST_F(ApiHandlerTest, AuthenticationFailureIs401) {
  config_.authenticator = std::make_shared<FixedUser>();
  const auto response = call(kPrefix, {{"Authorization", "Bearer bad"}});
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(
      response.body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})"
      "\n");
}

TEST_F(ApiHandlerTest, AuthorizationDenialIs403WithKubernetesMessage) {
  auto authorizer = std::make_shared<DenyingAuthorizer>();
  config_.authenticator = std::make_shared<FixedUser>();
  config_.authorizer = authorizer;
  EXPECT_EQ(
      call(std::string(kPrefix) + "/namespaces/default/pods/*/http_requests").body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods.custom.metrics.k8s.io \"*\" is forbidden: User \"u\" cannot get resource \"pods/http_requests\" in API group \"custom.metrics.k8s.io\" in the namespace \"default\"","reason":"Forbidden","details":{"name":"*","group":"custom.metrics.k8s.io","kind":"pods"},"code":403})"
      "\n");
  EXPECT_EQ(
      call("/metrics").body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"u\" cannot get path \"/metrics\"","reason":"Forbidden","details":{},"code":403})"
      "\n");
  authorizer->reason = "no RBAC policy matched";
  EXPECT_NE(
      call(std::string(kPrefix) + "/nodes/n1/m")
          .body.find(
              R"(cannot get resource \"nodes/m\" in API group \"custom.metrics.k8s.io\" at the cluster scope: no RBAC policy matched")"),
      std::string::npos);
  authorizer->fail = true;
  const auto failed = call(kPrefix);
  EXPECT_EQ(failed.status, 500);
  EXPECT_NE(failed.body.find("subjectaccessreviews unavailable"), std::string::npos);
}

// Records what it was asked and allows only what `allow` says.
class RecordingAuthorizer final : public Authorizer {
 public:
  core::Result<AuthorizationDecision> authorize(const UserInfo&, const RequestInfo& info) override {
    seen.push_back(info);
    return AuthorizationDecision{allow, ""};
  }
  bool allow = false;
  std::vector<RequestInfo> seen;
};

TEST_F(ApiHandlerTest, ExtraRoutesAreAuthorizedAsNonResourcePaths) {
  auto authorizer = std::make_shared<RecordingAuthorizer>();
  config_.authenticator = std::make_shared<FixedUser>();
  config_.authorizer = authorizer;
  int calls = 0;
  config_.extraRoutes["/debug/explain"] = [&calls](const HttpRequest&, const QueryParams& query,
                                                   const UserInfo&) {
    ++calls;
    return plainTextResponse(200, "explained " + query.get("metric").value_or(""));
  };
  const auto denied = call("/debug/explain?metric=m");
  EXPECT_EQ(denied.status, 403);
  EXPECT_NE(denied.body.find(R"(forbidden: User \"u\" cannot get path \"/debug/explain\")"),
            std::string::npos)
      << denied.body;
  EXPECT_EQ(calls, 0);
  ASSERT_EQ(authorizer->seen.size(), 1u);
  EXPECT_FALSE(authorizer->seen[0].isResourceRequest);
  EXPECT_EQ(authorizer->seen[0].path, "/debug/explain");
  EXPECT_EQ(authorizer->seen[0].verb, "get");

  authorizer->allow = true;
  const auto allowed = call("/debug/explain?metric=m");
  EXPECT_EQ(allowed.status, 200);
  EXPECT_EQ(allowed.body, "explained m\n");
  EXPECT_EQ(calls, 1);
  HttpRequest post = get("/debug/explain");
  post.method = "POST";
  EXPECT_EQ(handler().handle(post).status, 405);
  EXPECT_NE(call("/").body.find("\"/debug/explain\""), std::string::npos);
}

class ThrowingProvider final : public ExternalMetricsProvider {
 public:
  std::vector<ExternalMetricInfo> listMetrics() const override { return {{"q"}}; }
  core::Result<std::vector<ExternalMetricValue>> getExternalMetric(
      std::string_view, std::string_view, const core::LabelSelector&) override {
    throw std::runtime_error("boom");
  }
};

// Records what the API layer hands a provider that acts on the caller's behalf.
class CallerRecordingProvider final : public ExternalMetricsProvider {
 public:
  std::vector<ExternalMetricInfo> listMetrics() const override { return {{"q"}}; }
  core::Result<std::vector<ExternalMetricValue>> getExternalMetric(
      std::string_view, std::string_view, const core::LabelSelector&) override {
    return core::Status::internal("the API layer must call getExternalMetricAs");
  }
  core::Result<std::vector<ExternalMetricValue>> getExternalMetricAs(
      const UserInfo& caller, std::string_view rawLabelSelector, std::string_view namespaceName,
      std::string_view metric, const core::LabelSelector& selector) override {
    user = caller;
    raw = std::string(rawLabelSelector);
    parsed = selector.toString();
    where = std::string(namespaceName) + "/" + std::string(metric);
    return std::vector<ExternalMetricValue>{};
  }
  UserInfo user;
  std::string raw;
  std::string parsed;
  std::string where;
};

TEST_F(ApiHandlerTest, ExternalProvidersGetTheCallerAndTheSelectorAsSent) {
  auto provider = std::make_shared<CallerRecordingProvider>();
  config_.externalMetrics = provider;
  config_.authenticator = std::make_shared<FixedUser>();
  const auto response = call(
      "/apis/external.metrics.k8s.io/v1beta1/namespaces/jobs/q?labelSelector=topic%20in%20(b,a)");
  EXPECT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(provider->user.name, "u");
  EXPECT_EQ(provider->user.groups, std::vector<std::string>{"g"});
  EXPECT_EQ(provider->raw, "topic in (b,a)");
  EXPECT_EQ(provider->parsed, core::LabelSelector::parse("topic in (a,b)")->toString());
  EXPECT_EQ(provider->where, "jobs/q");
}

TEST_F(ApiHandlerTest, ProviderExceptionsBecome500) {
  config_.externalMetrics = std::make_shared<ThrowingProvider>();
  const auto response = call("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/q");
  EXPECT_EQ(response.status, 500);
  EXPECT_NE(response.body.find("Internal error occurred: boom"), std::string::npos);
}

// An authenticator whose answers come later, from the test (a TokenReview in flight).
class ParkingAuthenticator final : public Authenticator {
 public:
  core::Result<UserInfo> authenticate(const HttpRequest&) override {
    return UserInfo{"u", "", {"g"}, {}};
  }
  void authenticateAsync(const HttpRequest&, std::chrono::steady_clock::time_point,
                         std::function<void(core::Result<UserInfo>)> done) override {
    parked.push_back(std::move(done));
  }
  std::vector<std::function<void(core::Result<UserInfo>)>> parked;
};

// What HttpsServer gives handleAsync(), recorded: resume() queues the work for the test to run as
// the handler thread would.
class RecordedRequest final : public PendingRequest {
 public:
  std::chrono::steady_clock::time_point deadline() const override {
    return std::chrono::steady_clock::time_point::max();
  }
  void respond(HttpResponse response) override { responses.push_back(std::move(response)); }
  void resume(std::function<void()> work) override { resumed.push_back(std::move(work)); }
  // Runs the oldest resumed work as a handler thread would, and lets go of it (the work holds the
  // request: keeping it would be a cycle).
  void runResumed() {
    auto work = std::move(resumed.front());
    resumed.erase(resumed.begin());
    work();
  }

  std::vector<HttpResponse> responses;
  std::vector<std::function<void()>> resumed;
};

TEST_F(ApiHandlerTest, AsyncRequestsAnsweredFromCachesFinishBeforeReturning) {
  auto pending = std::make_shared<RecordedRequest>();
  handler().handleAsync(std::make_shared<HttpRequest>(
                            get(std::string(kPrefix) + "/namespaces/default/pods/*/http_requests")),
                        pending);
  ASSERT_EQ(pending->responses.size(), 1u);
  EXPECT_EQ(pending->responses[0].status, 200);
  EXPECT_TRUE(pending->resumed.empty());
}

TEST_F(ApiHandlerTest, AsyncRequestWaitingForAReviewResumesOnAHandlerThread) {
  auto authenticator = std::make_shared<ParkingAuthenticator>();
  config_.authenticator = authenticator;
  const HttpRequest request =
      get(std::string(kPrefix) + "/namespaces/default/pods/*/http_requests");
  // Nothing to answer on the I/O thread: the review would have to be waited for.
  EXPECT_FALSE(handler().handleWithoutWaiting(request));
  auto pending = std::make_shared<RecordedRequest>();
  handler().handleAsync(std::make_shared<HttpRequest>(request), pending);
  EXPECT_TRUE(pending->responses.empty());  // parked: the handler thread is free
  ASSERT_EQ(authenticator->parked.size(), 1u);
  authenticator->parked[0](UserInfo{"u", "", {"g"}, {}});  // the review's answer arrives
  EXPECT_TRUE(pending->responses.empty());                 // not on the thread that delivered it
  ASSERT_EQ(pending->resumed.size(), 1u);
  pending->runResumed();
  ASSERT_EQ(pending->responses.size(), 1u);
  EXPECT_EQ(pending->responses[0].status, 200);
  EXPECT_NE(pending->responses[0].body.find("web-1"), std::string::npos);
}

TEST_F(ApiHandlerTest, RefusedReviewIs429WithRetryAfter) {
  auto authenticator = std::make_shared<ParkingAuthenticator>();
  config_.authenticator = authenticator;
  auto pending = std::make_shared<RecordedRequest>();
  handler().handleAsync(std::make_shared<HttpRequest>(get(kPrefix)), pending);
  authenticator->parked[0](core::Status(429, "TooManyRequests", "too many reviews"));
  pending->runResumed();
  ASSERT_EQ(pending->responses.size(), 1u);
  const HttpResponse& response = pending->responses[0];
  EXPECT_EQ(response.status, 429);
  EXPECT_NE(response.body.find(R"("retryAfterSeconds":1)"), std::string::npos) << response.body;
  bool retryAfter = false;
  for (const auto& [name, value] : response.headers)
    retryAfter |= name == "Retry-After" && value == "1";
  EXPECT_TRUE(retryAfter);
}

TEST_F(ApiHandlerTest, WithoutWaitingAnswersOnlyWhatNeedsNoWaitAndRecordsNothingElse) {
  custom_->addValue({{{"", "pods"}, true, "slow"},
                     {"Pod", "default", "web-1", "/v1"},
                     {{"app", "web"}},
                     core::Quantity::fromMilli(1)});
  custom_->delayMetric("slow", std::chrono::milliseconds(1));
  const std::string cached = std::string(kPrefix) + "/namespaces/default/pods/%2A/http_requests";
  const std::string waits = std::string(kPrefix) + "/namespaces/default/pods/%2A/slow";
  auto answered = handler().handleWithoutWaiting(get(cached));
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->status, 200);
  EXPECT_EQ(answered->body, call(cached).body);
  // A provider that would wait: no answer, nothing counted; handle() then answers it.
  EXPECT_FALSE(handler().handleWithoutWaiting(get(waits)));
  EXPECT_EQ(call(waits).status, 200);
  // Only GETs of the metrics APIs (health, /metrics and the rest take the handler threads).
  EXPECT_FALSE(handler().handleWithoutWaiting(get("/healthz")));
  HttpRequest post = get(cached);
  post.method = "POST";
  EXPECT_FALSE(handler().handleWithoutWaiting(post));
  // Three answers counted (the refused attempt is not).
  const auto metrics = call("/metrics").body;
  EXPECT_NE(
      metrics.find(R"(gpuscale_apiserver_requests_total{code="200",route="custom_metric"} 3)"),
      std::string::npos)
      << metrics;
  // An authenticator that may have to wait for a review (the default) answers nothing here.
  config_.authenticator = std::make_shared<FixedUser>();
  handler_.reset();
  EXPECT_FALSE(handler().handleWithoutWaiting(get(cached)));
  EXPECT_EQ(call(cached).status, 200);
}

}  // namespace api_handler_test
}  // namespace gpuscale::apiserver
