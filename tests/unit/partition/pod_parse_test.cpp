// readPod (kube_objects.h): what makes a pod a GPU user, every way a pod can hold a GPU.
#include "gpuscale/partition/kube_objects.h"

#include <gtest/gtest.h>

namespace gpuscale::partition {
namespace pod_parse_test {

using nlohmann::json;

json withGpu(const std::string& name, const char* field = "limits") {
  return {{"name", name}, {"resources", {{field, {{"nvidia.com/gpu", "1"}}}}}};
}

json cpuOnly(const std::string& name) {
  return {{"name", name}, {"resources", {{"requests", {{"cpu", "1"}}}}}};
}

json pod(json spec, const std::string& phase = "Running") {
  return {{"metadata", {{"name", "p"}, {"namespace", "default"}}},
          {"spec", std::move(spec)},
          {"status", {{"phase", phase}}}};
}

TEST(PodParseTest, EveryWayAPodCanHoldAGpuCounts) {
  struct Row {
    const char* what;
    json pod;
    std::string use;  // "" = not a GPU user; "error" = the pod does not read
  };
  json sidecar = withGpu("proxy");
  sidecar["restartPolicy"] = "Always";
  const std::vector<Row> rows{
      {"no GPU anywhere", pod({{"containers", {cpuOnly("app")}}}), ""},
      {"a container's limit", pod({{"containers", {cpuOnly("a"), withGpu("b")}}}),
       "container \"b\" requests nvidia.com/gpu"},
      {"a container's request only", pod({{"containers", {withGpu("app", "requests")}}}),
       "container \"app\" requests nvidia.com/gpu"},
      {"a MIG resource",
       pod({{"containers",
             {{{"name", "app"}, {"resources", {{"limits", {{"nvidia.com/mig-1g.5gb", "1"}}}}}}}}}),
       "container \"app\" requests nvidia.com/mig-1g.5gb"},
      {"an init container",
       pod({{"containers", {cpuOnly("app")}}, {"initContainers", {withGpu("warmup")}}}),
       "init container \"warmup\" requests nvidia.com/gpu"},
      {"a sidecar (restartable init container)",
       pod({{"containers", {cpuOnly("app")}}, {"initContainers", {sidecar}}}),
       "sidecar container \"proxy\" requests nvidia.com/gpu"},
      {"a pod-level DRA claim",
       pod({{"containers", {cpuOnly("app")}},
            {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimTemplateName", "one-gpu"}}}}}),
       "resource claim \"gpu\" (Dynamic Resource Allocation)"},
      {"a container's DRA claim reference",
       pod({{"containers", {{{"name", "app"}, {"resources", {{"claims", {{{"name", "gpu"}}}}}}}}}}),
       "container \"app\" uses a resource claim"},
      {"an init container's DRA claim reference",
       pod({{"containers", {cpuOnly("app")}},
            {"initContainers",
             {{{"name", "prep"}, {"resources", {{"claims", {{{"name", "gpu"}}}}}}}}}}),
       "init container \"prep\" uses a resource claim"},
      {"pod-level resources",
       pod({{"containers", {cpuOnly("app")}},
            {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}),
       "pod-level resources request nvidia.com/gpu"},
      {"an empty claims list",
       pod({{"containers", {cpuOnly("app")}}, {"resourceClaims", json::array()}}), ""},
      {"a finished pod holds nothing", pod({{"containers", {withGpu("app")}}}, "Succeeded"), ""},
      {"a failed pod holds nothing",
       pod({{"containers", {cpuOnly("app")}}, {"initContainers", {withGpu("warmup")}}}, "Failed"),
       ""},
      {"a pending pod with a GPU init container counts",
       pod({{"containers", {cpuOnly("app")}}, {"initContainers", {withGpu("warmup")}}}, "Pending"),
       "init container \"warmup\" requests nvidia.com/gpu"},
      {"a malformed pod does not read (the actuator counts it in the way)",
       pod({{"containers", "x"}, {"initContainers", {{{"resources", 3}}}}, {"resourceClaims", 1}}),
       "error"},
      {"no spec at all", json{{"metadata", {{"name", "p"}}}}, ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto read = readPod(row.pod);
    ASSERT_EQ(read.ok(), row.use != "error") << (read.ok() ? "" : read.status().toString());
    if (!read.ok()) continue;
    // A finished pod holds nothing, whatever it asked for.
    EXPECT_EQ(read->active() ? read->gpuUse : "", row.use);
    EXPECT_EQ(read->active() && read->usesGpu(), !row.use.empty());
  }
}

}  // namespace pod_parse_test
}  // namespace gpuscale::partition
