// gpuscale-adapter against a real Prometheus scraping the simulator's Triton exporter, checked with
// kubectl and curl; the last test stops Prometheus and brings it back.
#include <gtest/gtest.h>

#include "adapter_process.h"

namespace gpuscale::adapter::testing {
namespace adapter_prometheus_test {

// The story's rule, then more.
constexpr char kMoreRules[] =
    R"(- seriesQuery: 'nv_inference_request_success{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  name: {matches: "nv_inference_request_success", as: "inference_requests_per_second"}
  metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[30s])) by (<<.GroupBy>>)'
externalRules:
- seriesQuery: 'nv_inference_request_success{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
  name: {matches: "nv_inference_request_success", as: "triton_requests_per_second"}
  metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[30s])) by (model)'
)";

constexpr char kCustom[] = "/apis/custom.metrics.k8s.io/v1beta1";

class AdapterPrometheusTest : public TritonStackSuite<AdapterPrometheusTest> {
 protected:
  static void SetUpTestSuite() {
    startStack(std::string(gpuscale::testing::kTritonRules) + kMoreRules, {},
               std::string(kCustom) + "/namespaces/default/pods/triton-2/avg_time_queue_us");
  }

  static std::string both(const std::string& path, int code = 200) {
    return kubectlAndCurl(*adapter_, path, code);
  }
};

std::string resourceList(const std::string& version) {
  auto entry = [](const std::string& name, bool namespaced) {
    return R"({"name":")" + name + R"(","singularName":"","namespaced":)" +
           (namespaced ? "true" : "false") + R"(,"kind":"MetricValueList","verbs":["get"]})";
  };
  return R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"custom.metrics.k8s.io/)" +
         version + R"(","resources":[)" + entry("namespaces/avg_time_queue_us", false) + "," +
         entry("namespaces/inference_requests_per_second", false) + "," +
         entry("pods/avg_time_queue_us", true) + "," +
         entry("pods/inference_requests_per_second", true) + "]}\n";
}

TEST_F(AdapterPrometheusTest, DiscoveryV1beta1AndV1beta2) {
  EXPECT_EQ(both(kCustom), resourceList("v1beta1"));
  EXPECT_EQ(both("/apis/custom.metrics.k8s.io/v1beta2"), resourceList("v1beta2"));
  EXPECT_EQ(
      both("/apis/external.metrics.k8s.io/v1beta1"),
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"external.metrics.k8s.io/v1beta1","resources":[{"name":"triton_requests_per_second","singularName":"","namespaced":true,"kind":"ExternalMetricValueList","verbs":["get"]}]})"
      "\n");
}

TEST_F(AdapterPrometheusTest, NamedPodV1beta1AndV1beta2) {
  // triton-1 is idle: 0/(1+0) is exactly 0, a real value (not a missing one).
  EXPECT_EQ(
      both(std::string(kCustom) + "/namespaces/default/pods/triton-1/avg_time_queue_us"),
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta1","metadata":{},"items":[{"describedObject":{"kind":"Pod","namespace":"default","name":"triton-1","apiVersion":"/v1"},"metricName":"avg_time_queue_us","timestamp":"T","value":"0","selector":null}]})"
      "\n");
  EXPECT_EQ(
      both("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/triton-1/"
           "avg_time_queue_us"),
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta2","metadata":{},"items":[{"describedObject":{"kind":"Pod","namespace":"default","name":"triton-1","apiVersion":"/v1"},"metric":{"name":"avg_time_queue_us","selector":null},"timestamp":"T","value":"0"}]})"
      "\n");
}

std::vector<std::string> describedNames(const std::string& body) {
  static const std::regex kName(R"re("kind":"Pod","namespace":"default","name":"([^"]+)")re");
  std::vector<std::string> out;
  for (std::sregex_iterator it(body.begin(), body.end(), kName), end; it != end; ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

TEST_F(AdapterPrometheusTest, WildcardStarAndPercentEncodedStar) {
  const std::vector<std::string> all = {"triton-0", "triton-1", "triton-2"};
  for (std::string star : {"*", "%2A"}) {
    std::string body =
        both(std::string(kCustom) + "/namespaces/default/pods/" + star + "/avg_time_queue_us");
    EXPECT_EQ(describedNames(body), all) << star;
    // The busy pod's queue time is about 400 µs: a positive milli-quantity.
    EXPECT_NE(
        body.find(
            R"("name":"triton-0","apiVersion":"/v1"},"metricName":"avg_time_queue_us","timestamp":"T","value":")"),
        std::string::npos);
  }
}

TEST_F(AdapterPrometheusTest, LabelSelectorThroughKubePodLabels) {
  const std::string path = std::string(kCustom) + "/namespaces/default/pods/%2A/avg_time_queue_us";
  EXPECT_EQ(describedNames(both(path + "?labelSelector=tier%3Dcpu")),
            std::vector<std::string>{"triton-2"});
  EXPECT_EQ(describedNames(both(path + "?labelSelector=tier%3Dgpu,app%3Dtriton")),
            (std::vector<std::string>{"triton-0", "triton-1"}));
  // No pod matches: as an empty LIST in prometheus-adapter, a 404.
  both(path + "?labelSelector=tier%3Dtpu", 404);
}

TEST_F(AdapterPrometheusTest, MetricLabelSelector) {
  EXPECT_EQ(
      both(std::string(kCustom) + "/namespaces/default/pods/triton-1/inference_requests_per_second"
                                  "?metricLabelSelector=model%3Dsimple"),
      R"({"kind":"MetricValueList","apiVersion":"custom.metrics.k8s.io/v1beta1","metadata":{},"items":[{"describedObject":{"kind":"Pod","namespace":"default","name":"triton-1","apiVersion":"/v1"},"metricName":"inference_requests_per_second","timestamp":"T","value":"0","selector":{"matchLabels":{"model":"simple"}}}]})"
      "\n");
  // A selector that matches no series: no data, so 404 rather than 0.
  both(std::string(kCustom) +
           "/namespaces/default/pods/triton-1/inference_requests_per_second"
           "?metricLabelSelector=model%3Dother",
       404);
}

TEST_F(AdapterPrometheusTest, NamespaceMetricsRoute) {
  std::string body = both(std::string(kCustom) + "/namespaces/default/metrics/avg_time_queue_us");
  EXPECT_NE(
      body.find(
          R"("describedObject":{"kind":"Namespace","name":"default","apiVersion":"/v1"},"metricName":"avg_time_queue_us")"),
      std::string::npos)
      << body;
}

TEST_F(AdapterPrometheusTest, ExternalMetric) {
  std::string body =
      both("/apis/external.metrics.k8s.io/v1beta1/namespaces/default/triton_requests_per_second");
  EXPECT_NE(
      body.find(
          R"({"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":[{"metricName":"triton_requests_per_second","metricLabels":{"model":"simple"},"timestamp":"T","value":")"),
      std::string::npos)
      << body;
  // Another namespace has no data: an empty list, as prometheus-adapter answers (the HPA sees a
  // missing metric, never 0).
  EXPECT_EQ(
      both("/apis/external.metrics.k8s.io/v1beta1/namespaces/elsewhere/triton_requests_per_second"),
      R"({"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":[]})"
      "\n");
}

TEST_F(AdapterPrometheusTest, UnknownMetricIsNotFound) {
  const std::string path = std::string(kCustom) + "/namespaces/default/pods/%2A/nope";
  EXPECT_EQ(
      both(path, 404),
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the metric nope for pods","reason":"NotFound","code":404})"
      "\n");
  ProcessResult k = adapter_->kubectl(path);
  EXPECT_NE(k.exitCode, 0);
  EXPECT_NE(k.err.find("Error from server (NotFound): the server could not find the metric nope "
                       "for pods"),
            std::string::npos)
      << k.err;
}

TEST_F(AdapterPrometheusTest, BadSelectorIsBadRequest) {
  HttpReply reply =
      curl(adapter_->url(std::string(kCustom) + "/namespaces/default/pods/%2A/avg_time_queue_us"
                                                "?labelSelector=tier%20in%20(cpu"));
  EXPECT_EQ(reply.code, 400);
  EXPECT_NE(reply.body.find(R"("reason":"BadRequest","code":400})"), std::string::npos)
      << reply.body;
  ProcessResult k = adapter_->kubectl(std::string(kCustom) +
                                      "/namespaces/default/pods/%2A/avg_time_queue_us"
                                      "?labelSelector=tier%20in%20(cpu");
  EXPECT_NE(k.err.find("(BadRequest)"), std::string::npos) << k.err;
}

TEST_F(AdapterPrometheusTest, SelfMetrics) {
  HttpReply reply = curl(adapter_->url("/metrics"));
  ASSERT_EQ(reply.code, 200);
  for (std::string family :
       {"gpuscale_adapter_prometheus_request_duration_seconds_bucket{backend=\"default\",endpoint="
        "\"query\"",
        "gpuscale_adapter_relist_duration_seconds_count",
        "gpuscale_adapter_registry_metrics{api=\"custom\"} 4",
        "gpuscale_adapter_rule_last_error{rule=\"rules[0]\"} 0",
        "gpuscale_adapter_query_cache_total{backend=\"default\",outcome=\"miss\"}",
        "gpuscale_apiserver_requests_total"}) {
    EXPECT_NE(reply.body.find(family), std::string::npos) << family;
  }
}

// Runs last (gtest keeps declaration order within a suite): stops and restarts Prometheus.
TEST_F(AdapterPrometheusTest, PrometheusDownThenBack) {
  const std::string named =
      std::string(kCustom) + "/namespaces/default/pods/triton-1/avg_time_queue_us";
  prometheus_->stop();
  std::this_thread::sleep_for(std::chrono::seconds(3));  // past the cache TTL (2s)
  HttpReply down = curl(adapter_->url(named));
  EXPECT_EQ(down.code, 503) << down.body;
  EXPECT_NE(down.body.find("unable to fetch metrics: prometheus connection failed"),
            std::string::npos)
      << down.body;
  // Several failed relists later, the last good discovery is still served and the process is up.
  EXPECT_EQ(both(kCustom), resourceList("v1beta1"));
  EXPECT_EQ(curl(adapter_->url("/readyz")).code, 200);
  EXPECT_TRUE(adapter_->running());
  HttpReply metrics = curl(adapter_->url("/metrics"));
  EXPECT_NE(metrics.body.find("gpuscale_adapter_rule_last_error{rule=\"rules[0]\"} 1"),
            std::string::npos);

  ASSERT_TRUE(prometheus_->restart().ok()) << prometheus_->logTail();
  EXPECT_TRUE(gpuscale::testing::waitUntil([&] { return curl(adapter_->url(named)).code == 200; },
                                           std::chrono::seconds(60)));
}

}  // namespace adapter_prometheus_test
}  // namespace gpuscale::adapter::testing
