#include "gpuscale/sim/vllm_model.h"

#include <gtest/gtest.h>

#include "exposition_lines.h"

namespace gpuscale::sim {
namespace vllm_model_test {

using testing::ExpositionLine;
using testing::withLabel;

// The demo model's series at 10 s: the numbers the vLLM rules' integration test expects the adapter
// to serve are these, through Prometheus.
TEST(VllmModelTest, DemoSeriesAtTenSeconds) {
  const std::string text = VllmModel(demoVllmModel()).render(10);
  auto labels = [](const char* pod, const char* engine) {
    return testing::vllmLabels("Qwen/Qwen2.5-0.5B-Instruct", engine, "default", pod);
  };
  const std::vector<ExpositionLine> rows = {
      {"busy pod waiting", "vllm:num_requests_waiting" + labels("vllm-0", "0") + " 4.0\n"},
      {"idle pod waiting", "vllm:num_requests_waiting" + labels("vllm-1", "0") + " 0.0\n"},
      {"second engine of a data-parallel pod",
       "vllm:num_requests_waiting" + labels("vllm-2", "1") + " 1.0\n"},
      {"KV cache", "vllm:kv_cache_usage_perc" + labels("vllm-2", "1") + " 0.75\n"},
      {"the old release's gauge", "vllm:gpu_cache_usage_perc" + labels("vllm-3", "0") + " 0.875\n"},
      {"2 req/s x 10 s",
       "vllm:request_queue_time_seconds_count" + labels("vllm-0", "0") + " 20.0\n"},
      {"queue time sum", "vllm:request_queue_time_seconds_sum" + labels("vllm-0", "0") + " 25.0\n"},
      {"generated tokens", "vllm:generation_tokens_total" + labels("vllm-0", "0") + " 2000.0\n"},
      {"prompt tokens", "vllm:prompt_tokens_total" + labels("vllm-2", "0") + " 1000.0\n"},
      {"TTFT 1.5 s lies in (1.0, 2.5]", "vllm:time_to_first_token_seconds_bucket" +
                                            withLabel(labels("vllm-0", "0"), R"(le="2.5")") +
                                            " 20.0\n"},
      {"and not below", "vllm:time_to_first_token_seconds_bucket" +
                            withLabel(labels("vllm-0", "0"), R"(le="1.0")") + " 0.0\n"},
      {"kube-state-metrics pod labels",
       R"(kube_pod_labels{namespace="default",pod="vllm-3",label_app="vllm",label_release="old"} 1)"
       "\n"},
      {"one kube_pod_labels per pod, not per engine",
       R"(kube_pod_labels{namespace="default",pod="vllm-2",label_app="vllm"} 1)"
       "\n"},
      {"namespace labels",
       R"(kube_namespace_labels{namespace="default",label_team="inference"} 1)"},
  };
  testing::expectLines(text, rows);
  const std::string pod2 = R"(kube_pod_labels{namespace="default",pod="vllm-2")";
  EXPECT_EQ(text.find(pod2), text.rfind(pod2));
}

}  // namespace vllm_model_test
}  // namespace gpuscale::sim
