#include "gpuscale/partition/gpu_memory_need.h"

#include <gtest/gtest.h>

namespace gpuscale::partition {
namespace gpu_memory_need_test {

using Kind = GpuMemoryNeed::Kind;

ContainerCommandLine vllm(std::vector<std::string> args,
                          std::string image = "vllm/vllm-openai:v0.11.0") {
  return {"vllm", std::move(image), {}, std::move(args), true};
}

TEST(GpuMemoryNeedTest, FromTheCommandLineAndAnnotations) {
  struct Row {
    const char* what;
    std::vector<ContainerCommandLine> containers;
    std::map<std::string, std::string> annotations;
    Kind kind;
    double value;
    const char* sourceHas;
  };
  const std::vector<Row> rows = {
      {"the image names vLLM, the flag and its value",
       {vllm({"--gpu-memory-utilization", "0.45"})},
       {},
       Kind::kFraction,
       0.45,
       "--gpu-memory-utilization, container \"vllm\""},
      {"--flag=value",
       {vllm({"--model", "m", "--gpu-memory-utilization=0.3"})},
       {},
       Kind::kFraction,
       0.3,
       "0.3"},
      {"the underscore spelling vLLM's parser accepts",
       {vllm({"--gpu_memory_utilization", "0.5"})},
       {},
       Kind::kFraction,
       0.5,
       "0.5"},
      {"no flag: vLLM's default",
       {vllm({"--model", "m"})},
       {},
       Kind::kFraction,
       0.9,
       "its default"},
      {"`vllm serve` in the command, any image",
       {{"server",
         "registry.example/llm:1",
         {"vllm", "serve"},
         {"m", "--gpu-memory-utilization", "0.2"},
         true}},
       {},
       Kind::kFraction,
       0.2,
       "container \"server\""},
      {"the OpenAI entrypoint module",
       {{"server",
         "python:3.12",
         {"python3", "-m", "vllm.entrypoints.openai.api_server"},
         {"--gpu-memory-utilization", "0.25"},
         true}},
       {},
       Kind::kFraction,
       0.25,
       "0.25"},
      {"a shell string, the value quoted",
       {{"server",
         "busybox",
         {"/bin/sh", "-c"},
         {"exec vllm serve m --gpu-memory-utilization '0.45' --port 8000"},
         true}},
       {},
       Kind::kFraction,
       0.45,
       "0.45"},
      {"the value from a variable: unknown",
       {vllm({"--gpu-memory-utilization", "$(UTIL)"})},
       {},
       Kind::kUnknown,
       0,
       "\"$(UTIL)\""},
      {"a value above 1: unknown",
       {vllm({"--gpu-memory-utilization", "1.5"})},
       {},
       Kind::kUnknown,
       0,
       "not a number in (0, 1]"},
      {"the flag last, without a value: unknown",
       {vllm({"--gpu-memory-utilization"})},
       {},
       Kind::kUnknown,
       0,
       "\"\""},
      {"--config may set it: unknown",
       {vllm({"--config", "/etc/vllm.yaml"})},
       {},
       Kind::kUnknown,
       0,
       "--config"},
      {"not vLLM: no need",
       {{"triton", "nvcr.io/nvidia/tritonserver:25.01", {}, {}, true}},
       {},
       Kind::kNone,
       0,
       ""},
      {"a vLLM container without a GPU (a router): no need",
       {{"router", "vllm/vllm-openai", {}, {"--gpu-memory-utilization", "0.5"}, false}},
       {},
       Kind::kNone,
       0,
       ""},
      {"the largest of two GPU containers",
       {vllm({"--gpu-memory-utilization", "0.3"}), vllm({"--gpu-memory-utilization", "0.6"})},
       {},
       Kind::kFraction,
       0.6,
       "0.6"},
      {"the fraction annotation wins over the arguments",
       {vllm({})},
       {{"gpuscale.io/gpu-memory-fraction", "0.3"}},
       Kind::kFraction,
       0.3,
       "annotation"},
      {"the bytes annotation, any server",
       {{"triton", "tritonserver", {}, {}, true}},
       {{"gpuscale.io/gpu-memory", "2Gi"}},
       Kind::kBytes,
       2147483648.0,
       "2Gi of each device"},
      {"a malformed fraction annotation: unknown",
       {},
       {{"gpuscale.io/gpu-memory-fraction", "half"}},
       Kind::kUnknown,
       0,
       "\"half\""},
      {"a malformed bytes annotation: unknown",
       {},
       {{"gpuscale.io/gpu-memory", "-1Gi"}},
       Kind::kUnknown,
       0,
       "positive quantity"},
  };
  for (const Row& row : rows) {
    const GpuMemoryNeed need = gpuMemoryNeed(row.containers, row.annotations);
    EXPECT_EQ(need.kind, row.kind) << row.what << ": " << need.source;
    EXPECT_DOUBLE_EQ(need.value, row.value) << row.what;
    EXPECT_NE(need.source.find(row.sourceHas), std::string::npos)
        << row.what << ": " << need.source;
  }
}

TEST(GpuMemoryNeedTest, ReplicasPerDevice) {
  constexpr double kGiB = 1073741824.0;
  struct Row {
    const char* what;
    GpuMemoryNeed need;
    std::optional<double> deviceBytes;
    int want;
  };
  const std::vector<Row> rows = {
      {"no need: no bound", {}, std::nullopt, kNoMemoryBound},
      {"vLLM's default 0.9: one pod", {Kind::kFraction, 0.9, ""}, std::nullopt, 1},
      {"0.45: two pods", {Kind::kFraction, 0.45, ""}, std::nullopt, 2},
      {"0.5: two pods exactly", {Kind::kFraction, 0.5, ""}, std::nullopt, 2},
      {"0.25: four pods exactly", {Kind::kFraction, 0.25, ""}, std::nullopt, 4},
      {"0.3: three pods", {Kind::kFraction, 0.3, ""}, 5e9, 3},
      {"2 GiB of a 5 GB slice: two pods", {Kind::kBytes, 2 * kGiB, ""}, 5e9, 2},
      {"bytes on a device of unknown memory: none", {Kind::kBytes, 2 * kGiB, ""}, std::nullopt, 0},
      {"unknown: none", {Kind::kUnknown, 0, "why"}, 5e9, 0},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(replicasForMemory(row.need, row.deviceBytes), row.want) << row.what;
  }
}

TEST(GpuMemoryNeedTest, DescribesTheBound) {
  const GpuMemoryNeed vllmDefault = gpuMemoryNeed({vllm({})}, {});
  EXPECT_EQ(describeMemoryBound(vllmDefault, 1),
            "vLLM preallocates 0.9 of each device (its default --gpu-memory-utilization, "
            "container \"vllm\"): 1 pod per device");
  EXPECT_EQ(describeMemoryBound({Kind::kFraction, 0.45, "x"}, 2), "x: 2 pods per device");
  EXPECT_EQ(describeMemoryBound({Kind::kUnknown, 0, "y"}, 0),
            "the GPU memory a pod takes is unknown: y");
  EXPECT_EQ(describeMemoryBound({Kind::kBytes, 1, "2Gi of each device"}, 0),
            "the device's memory is unknown, and a pod takes 2Gi of each device");
}

}  // namespace gpu_memory_need_test
}  // namespace gpuscale::partition
