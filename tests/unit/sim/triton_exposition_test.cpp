#include "gpuscale/sim/triton_exposition.h"

#include <gtest/gtest.h>

#include "exposition_lines.h"

namespace gpuscale::sim {
namespace triton_exposition_test {

using testing::ExpositionLine;

TEST(TritonExpositionTest, FamiliesLabelsAndValues) {
  TritonPodSeries a;
  a.namespaceName = "default";
  a.pod = "triton-0";
  a.requestSuccess = 12;
  a.queueDurationUs = 4800.5;
  a.requestFailure["REJECTED"] = 2;
  a.pendingRequests = 3;
  TritonPodSeries b;
  b.namespaceName = "ns";
  b.pod = "triton-1";
  const std::string text = renderTritonSeries({a, b});
  const std::string labels = R"({model="simple",namespace="default",pod="triton-0",version="1"})";
  const std::vector<ExpositionLine> rows = {
      {"counter type", "# TYPE nv_inference_queue_duration_us counter\n"},
      {"gauge type", "# TYPE nv_inference_pending_request_count gauge\n"},
      {"success", "nv_inference_request_success" + labels + " 12\n"},
      {"fractional µs", "nv_inference_queue_duration_us" + labels + " 4800.5\n"},
      {"failure with reason",
       R"(nv_inference_request_failure{model="simple",namespace="default",pod="triton-0",version="1",reason="REJECTED"} 2)"
       "\n"},
      {"failure reasons start at 0",
       R"(nv_inference_request_failure{model="simple",namespace="ns",pod="triton-1",version="1",reason="OTHER"} 0)"
       "\n"},
      {"pending gauge", "nv_inference_pending_request_count" + labels + " 3\n"},
      {"compute infer", "nv_inference_compute_infer_duration_us" + labels + " 0\n"},
      {"second pod",
       R"(nv_inference_count{model="simple",namespace="ns",pod="triton-1",version="1"} 0)"},
  };
  testing::expectLines(text, rows);
  EXPECT_EQ(text.find("# TYPE nv_inference_request_success"),
            text.rfind("# TYPE nv_inference_request_success"))
      << "one TYPE line per family";
  EXPECT_EQ(renderTritonSeries({}), "") << "no pods, no families";
}

}  // namespace triton_exposition_test
}  // namespace gpuscale::sim
