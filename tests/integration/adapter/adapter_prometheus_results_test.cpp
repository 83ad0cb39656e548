// The bad answers a real Prometheus gives to rules whose metricsQuery is wrong for custom metrics:
// a matrix (a range selector), a scalar, and an execution error (many-to-many matching, HTTP 422).
// Each must be the documented 500 Status naming the cause, with the adapter still serving the good
// rule. (A misbehaving server — slow, HTTP 500, garbage, 50 MB — is in adapter_fault_test.cpp.)
// VictoriaMetrics answers differently, pinned by its variant: MetricsQL's scalar() is a vector
// without labels, which matches no pod (an empty list, 200), and its execution errors carry
// errorType "422".
#include <gtest/gtest.h>

#include "adapter_process.h"
#include "support/triton_rules.h"
#include "support/victoriametrics.h"

namespace gpuscale::adapter::testing {
namespace adapter_prometheus_results_test {

// The Triton rule, then rules of this test.
const std::string kRules = std::string(::gpuscale::testing::kTritonRules) +
                           R"(- seriesQuery: 'nv_inference_request_success{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  name: {matches: "nv_inference_request_success", as: "requests_matrix"}
  metricsQuery: '<<.Series>>{<<.LabelMatchers>>}[1m]'
- seriesQuery: 'nv_inference_request_success{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  name: {matches: "nv_inference_request_success", as: "requests_scalar"}
  metricsQuery: 'scalar(sum(<<.Series>>{<<.LabelMatchers>>}))'
- seriesQuery: 'nv_inference_request_success{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  name: {matches: "nv_inference_request_success", as: "requests_many_to_many"}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>} * on() <<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
)";

constexpr char kPods[] = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/";

TEST(AdapterPrometheusResultsTest, WrongResultsFromARealPrometheusAreNamedStatuses) {
  auto stack = TritonStack::start(kRules, {}, std::string(kPods) + "triton-2/avg_time_queue_us");
  if (stack == nullptr) GTEST_SKIP() << "prometheus or kubectl not installed";
  ASSERT_TRUE(stack->adapter);
  AdapterProcess& adapter = *stack->adapter;
  struct Case {
    std::string what;
    std::string metric;
    std::string message;
  };
  const bool victoria = gpuscale::test::victoriaMetricsUnderTest();
  const std::vector<Case> cases = {
      {"a range selector gives a matrix", "requests_matrix",
       "unable to fetch metrics: prometheus unexpected result type: Prometheus returned a matrix "
       "where a vector was expected"},
      {"scalar() gives a scalar", "requests_scalar",
       "unable to fetch metrics: prometheus unexpected result type: Prometheus returned a scalar "
       "where a vector was expected"},
      {"many-to-many matching is Prometheus' execution error", "requests_many_to_many",
       victoria ? "unable to fetch metrics: prometheus error: 422: "
                : "unable to fetch metrics: prometheus error: execution: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    if (victoria && c.metric == "requests_scalar") {
      std::string body = kubectlAndCurl(adapter, std::string(kPods) + "%2A/" + c.metric, 200);
      EXPECT_NE(body.find(R"("items":[])"), std::string::npos) << body;
      continue;
    }
    // Every pod of the namespace: the many-to-many case needs more than one series per side.
    std::string body = kubectlAndCurl(adapter, std::string(kPods) + "%2A/" + c.metric, 500);
    EXPECT_NE(body.find(c.message), std::string::npos) << body;
    EXPECT_NE(body.find(R"("kind":"Status")"), std::string::npos) << body;
    EXPECT_NE(body.find(R"("code":500)"), std::string::npos) << body;
    ProcessResult k = adapter.kubectl(std::string(kPods) + "%2A/" + c.metric);
    EXPECT_NE(k.exitCode, 0) << "kubectl sees the error too";
    EXPECT_EQ(curl(adapter.url("/healthz")).code, 200);
    EXPECT_TRUE(adapter.running());
  }
  HttpReply good = curl(adapter.url(std::string(kPods) + "triton-2/avg_time_queue_us"));
  EXPECT_EQ(good.code, 200) << good.body;
}

}  // namespace adapter_prometheus_results_test
}  // namespace gpuscale::adapter::testing
