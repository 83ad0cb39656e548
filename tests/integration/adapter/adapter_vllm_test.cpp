// rules/vllm.yaml against vLLM-shaped series: a real Prometheus scrapes the simulator's vLLM
// exporter (`gpuscale-sim exporter --server vllm`: four demo pods, one with two data-parallel
// engines and one of a release that names the KV-cache gauge vllm:gpu_cache_usage_perc), and the
// adapter serves the rule file as shipped; every metric of the file is read with kubectl get --raw
// (and curl) and checked against the numbers the model generates (vllm_model.h).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "adapter_process.h"

namespace gpuscale::adapter::testing {
namespace adapter_vllm_test {

constexpr char kCustom[] = "/apis/custom.metrics.k8s.io/v1beta1";
constexpr char kExternal[] = "/apis/external.metrics.k8s.io/v1beta1";

std::string shippedRules() {
  const char* source = std::getenv("GPUSCALE_SOURCE_DIR");
  std::ifstream in(std::string(source ? source : ".") + "/rules/vllm.yaml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A quantity as the adapter prints it ("4", "500m", "2424m", "487500u") as a number; NaN when the
// text is not one.
double quantityValue(const std::string& text) {
  static const std::regex kQuantity(R"(^(-?[0-9.]+)([num]?)$)");
  std::smatch m;
  if (!std::regex_match(text, m, kQuantity)) return NAN;
  const double scale = m[2] == "m" ? 1e-3 : m[2] == "u" ? 1e-6 : m[2] == "n" ? 1e-9 : 1;
  return std::stod(m[1]) * scale;
}

// The value of the item describing `pod` in a MetricValueList (NaN when absent).
double podValue(const std::string& body, const std::string& pod) {
  const std::regex item(
      R"re("name":")re" + pod +
      R"re(","apiVersion":"/v1"\},"metricName":"[^"]+","timestamp":"T","value":"([^"]+)")re");
  std::smatch m;
  return std::regex_search(body, m, item) ? quantityValue(m[1]) : NAN;
}

class AdapterVllmTest : public TritonStackSuite<AdapterVllmTest> {
 protected:
  static void SetUpTestSuite() {
    // Ready once a rate over the scraped samples exists.
    startStack(shippedRules(), {},
               std::string(kCustom) +
                   "/namespaces/default/pods/vllm-0/vllm_request_queue_time_seconds_avg",
               {"--server", "vllm"});
  }

  static std::string both(const std::string& path, int code = 200) {
    return kubectlAndCurl(*adapter_, path, code);
  }
};

TEST_F(AdapterVllmTest, DiscoveryListsEveryRule) {
  const std::string custom = both(kCustom);
  for (const char* metric :
       {"vllm_num_requests_waiting", "vllm_num_requests_running", "vllm_kv_cache_usage",
        "vllm_request_queue_time_seconds_avg", "vllm_time_to_first_token_seconds_p95",
        "vllm_generation_tokens_per_second"}) {
    for (const std::string resource : {"pods/", "namespaces/"}) {
      EXPECT_NE(custom.find(R"("name":")" + resource + metric + R"(")"), std::string::npos)
          << resource << metric << "\n"
          << custom;
    }
  }
  EXPECT_NE(both(kExternal).find(R"("name":"vllm_model_requests_waiting")"), std::string::npos);
}

// Per pod, from the model's numbers (vllm_model.cpp): gauges summed (or, for the KV cache, the
// worst) over a pod's engines, the mean queue time from the histogram's sum and count, p95 TTFT by
// interpolation inside the one bucket that holds every observation.
TEST_F(AdapterVllmTest, PodValuesMatchTheModel) {
  struct Row {
    const char* metric;
    const char* pod;
    double want;
  };
  const std::vector<Row> rows = {
      {"vllm_num_requests_waiting", "vllm-0", 4},
      {"vllm_num_requests_waiting", "vllm-1", 0},
      {"vllm_num_requests_waiting", "vllm-2", 2 + 1},  // two engines
      {"vllm_num_requests_waiting", "vllm-3", 0},
      {"vllm_num_requests_running", "vllm-0", 1},
      {"vllm_num_requests_running", "vllm-2", 2},
      {"vllm_kv_cache_usage", "vllm-0", 0.5},
      {"vllm_kv_cache_usage", "vllm-2", 0.75},   // the fuller engine
      {"vllm_kv_cache_usage", "vllm-3", 0.875},  // vllm:gpu_cache_usage_perc
      {"vllm_request_queue_time_seconds_avg", "vllm-0", 1.25},
      {"vllm_request_queue_time_seconds_avg", "vllm-1", 0},    // no requests: 0, not NaN
      {"vllm_request_queue_time_seconds_avg", "vllm-2", 0.5},  // (0.25 + 0.75) / 2
      {"vllm_time_to_first_token_seconds_p95", "vllm-0", 1.0 + 0.95 * 1.5},    // in (1, 2.5]
      {"vllm_time_to_first_token_seconds_p95", "vllm-2", 0.25 + 0.95 * 0.25},  // in (0.25, 0.5]
      {"vllm_time_to_first_token_seconds_p95", "vllm-3", 0.1 + 0.95 * 0.15},   // in (0.1, 0.25]
  };
  for (const Row& row : rows) {
    const std::string body =
        both(std::string(kCustom) + "/namespaces/default/pods/" + row.pod + "/" + row.metric);
    // The adapter prints milli-units, truncated.
    EXPECT_NEAR(podValue(body, row.pod), row.want, 0.0011) << row.metric << " " << row.pod << "\n"
                                                           << body;
  }
}

TEST_F(AdapterVllmTest, TokensPerSecondFromTheCounter) {
  // Requests/s x generated tokens per request; rate() over a few scrapes of counters that count
  // whole requests, so within 10%.
  struct Row {
    const char* pod;
    double want;
  };
  const std::vector<Row> rows = {{"vllm-0", 2 * 100.0}, {"vllm-2", 2 * 1 * 50.0}, {"vllm-3", 25}};
  for (const Row& row : rows) {
    const std::string path = std::string(kCustom) + "/namespaces/default/pods/" + row.pod +
                             "/vllm_generation_tokens_per_second";
    double value = NAN;
    const bool close = gpuscale::testing::waitUntil(
        [&] {
          value = podValue(withoutTimestamps(curl(adapter_->url(path)).body), row.pod);
          return std::abs(value - row.want) <= row.want * 0.1;
        },
        std::chrono::seconds(60));
    EXPECT_TRUE(close) << row.pod << ": " << value << " tokens/s, want " << row.want;
    EXPECT_NEAR(podValue(both(path), row.pod), row.want, row.want * 0.15) << row.pod;
  }
}

TEST_F(AdapterVllmTest, EveryPodAndLabelSelectors) {
  const std::string path =
      std::string(kCustom) + "/namespaces/default/pods/%2A/vllm_num_requests_waiting";
  const std::string all = both(path);
  for (const auto& [pod, want] : std::vector<std::pair<std::string, double>>{
           {"vllm-0", 4}, {"vllm-1", 0}, {"vllm-2", 3}, {"vllm-3", 0}}) {
    EXPECT_EQ(podValue(all, pod), want) << pod << "\n" << all;
  }
  // kube_pod_labels: the old release's pod alone.
  const std::string old = both(path + "?labelSelector=release%3Dold");
  EXPECT_EQ(podValue(old, "vllm-3"), 0);
  EXPECT_TRUE(std::isnan(podValue(old, "vllm-0"))) << old;
  // The namespace as a whole: the sum over its pods.
  const std::string ns =
      both(std::string(kCustom) + "/namespaces/default/metrics/vllm_num_requests_waiting");
  EXPECT_NE(ns.find(R"("value":"7")"), std::string::npos) << ns;
}

TEST_F(AdapterVllmTest, ExternalWaitingPerModel) {
  const std::string body =
      both(std::string(kExternal) + "/namespaces/default/vllm_model_requests_waiting");
  EXPECT_NE(
      body.find(
          R"("metricName":"vllm_model_requests_waiting","metricLabels":{"model_name":"Qwen/Qwen2.5-0.5B-Instruct"},"timestamp":"T","value":"7")"),
      std::string::npos)
      << body;
}

}  // namespace adapter_vllm_test
}  // namespace gpuscale::adapter::testing
