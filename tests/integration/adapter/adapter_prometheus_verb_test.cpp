// gpuscale-adapter with --prometheus-verb=POST against a real Prometheus: discovery must use the
// label APIs (label values by GET, the only method Prometheus gives that endpoint; label names and
// queries by POST), not fall back to /api/v1/series after a 405. Checked through the adapter's
// per-endpoint request counters and Prometheus' own per-handler counters.
#include <gtest/gtest.h>

#include "adapter_process.h"
#include "support/triton_rules.h"
#include "support/victoriametrics.h"

namespace gpuscale::adapter::testing {
namespace adapter_prometheus_verb_test {

// An override rule (label-values calls only) and a template rule (label names as well).
// The Triton rule, then rules of this test.
const std::string kRules =
    std::string(::gpuscale::testing::kTritonRules) +
    R"(- seriesQuery: '{__name__=~"nv_inference_request_success",namespace!="",pod!=""}'
  resources:
    template: "<<.Resource>>"
  name: {matches: "nv_inference_request_success", as: "inference_requests_per_second"}
  metricsQuery: 'sum(rate(<<.Series>>{<<.LabelMatchers>>}[30s])) by (<<.GroupBy>>)'
)";

constexpr char kNamed[] =
    "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/triton-2/avg_time_queue_us";

TEST(AdapterPrometheusVerbTest, PostDiscoversThroughTheLabelApisWithoutTheSeriesFallback) {
  auto stack = TritonStack::start(kRules, {"--prometheus-verb=POST"}, kNamed);
  if (stack == nullptr) GTEST_SKIP() << "prometheus or kubectl not installed";
  ASSERT_TRUE(stack->adapter);
  AdapterProcess& adapter = *stack->adapter;
  // Both rules discovered: the override rule answers (TritonStack waited for it), the template
  // rule is listed.
  EXPECT_TRUE(gpuscale::testing::waitUntil(
      [&] {
        return kubectlAndCurl(adapter, "/apis/custom.metrics.k8s.io/v1beta1")
                   .find("pods/inference_requests_per_second") != std::string::npos;
      },
      std::chrono::seconds(60)));
  // A few relists later (one a second), still no series call and no failed call.
  std::string metrics;
  EXPECT_TRUE(gpuscale::testing::waitUntil(
      [&] {
        metrics = curl(adapter.url("/metrics")).body;
        return adapterCalls(metrics, "label_values", "success") >= 6 &&
               adapterCalls(metrics, "labels", "success") >= 2;
      },
      std::chrono::seconds(90), std::chrono::milliseconds(500)))
      << metrics;
  EXPECT_EQ(adapterCalls(metrics, "series"), 0) << metrics;
  for (const char* endpoint : {"label_values", "labels", "query"}) {
    EXPECT_EQ(adapterCalls(metrics, endpoint), adapterCalls(metrics, endpoint, "success"))
        << endpoint << " calls failed:\n"
        << metrics;
  }
  // Queries by POST still answer.
  HttpReply named = curl(adapter.url(kNamed));
  EXPECT_EQ(named.code, 200) << named.body;

  // The server's side: label values answered 200, and /api/v1/series was never asked.
  const std::string own = curl(stack->prometheus->url() + "/metrics").body;
  if (gpuscale::test::victoriaMetricsUnderTest()) {
    // VictoriaMetrics counts requests and errors per path (and takes label values by POST too).
    EXPECT_GE(sumOf(own, "vm_http_requests_total", {R"(path="/api/v1/label/{}/values")"}), 6)
        << own;
    EXPECT_GE(sumOf(own, "vm_http_requests_total", {R"(path="/api/v1/labels")"}), 2);
    EXPECT_EQ(sumOf(own, "vm_http_requests_total", {R"(path="/api/v1/series")"}), 0);
    for (const char* path : {"/api/v1/label/{}/values", "/api/v1/labels"}) {
      EXPECT_EQ(sumOf(own, "vm_http_request_errors_total", {std::string("path=\"") + path + "\""}),
                0)
          << path;
    }
    return;
  }
  EXPECT_GE(sumOf(own, "prometheus_http_requests_total",
                  {R"(code="200")", R"(handler="/api/v1/label/:name/values")"}),
            6)
      << own;
  EXPECT_GE(sumOf(own, "prometheus_http_requests_total",
                  {R"(code="200")", R"(handler="/api/v1/labels")"}),
            2);
  EXPECT_EQ(sumOf(own, "prometheus_http_requests_total", {R"(handler="/api/v1/series")"}), 0);
  EXPECT_EQ(sumOf(own, "prometheus_http_requests_total", {R"(code="405")"}), 0);
}

}  // namespace adapter_prometheus_verb_test
}  // namespace gpuscale::adapter::testing
