// Sharing levers and the GPU memory pods take (gpu_memory_need.h): time-slicing never puts more
// pods on a device than what each preallocates allows, and is refused when that is unknown.
#include <gtest/gtest.h>

#include "gpuscale/partition/planner.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace planner_memory_test {

using testing::json;

const TimePoint kNow = TimePoint{} + std::chrono::hours(24 * 365 * 57);
const std::string k1g = "nvidia.com/mig-1g.5gb";

struct Server {
  std::string image = "nvcr.io/nvidia/tritonserver:25.01";
  json args = json::array();
  std::map<std::string, std::string> annotations;  // of the pod template (and so the pods)
};

Server vllmServer(json args) { return {"vllm/vllm-openai:v0.11.0", std::move(args), {}}; }

// The container of a Deployment's template or of a pod runs `server`.
void run(json& podLike, json& meta, const Server& server) {
  json& c = podLike["containers"][0];
  c["image"] = server.image;
  c["args"] = server.args;
  for (const auto& [k, v] : server.annotations) meta["annotations"][k] = v;
}

// `app` with `running` pods on the A100 "busy" (all 1g.5gb, 7 instances) running `server`, its HPA
// held at maxReplicas and wanting four times as many pods; `neighbours` more pods of another
// workload running `neighbour` on the same instances.
json cluster(const Server& server, int running = 7, int neighbours = 0,
             const Server& neighbour = {}) {
  std::vector<json> items{
      testing::migNode("busy", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}})};
  for (json item : testing::blockedApp("app", k1g, "busy", running, 0)) {
    if (item["kind"] == "Deployment") {
      json& tmpl = item["spec"]["template"];
      run(tmpl["spec"], tmpl["metadata"], server);
    } else if (item["kind"] == "Pod") {
      run(item["spec"], item["metadata"], server);
    } else if (item["kind"] == "HorizontalPodAutoscaler") {
      item = testing::hpa("default", "app",
                          testing::hpaSpec(1, running, running, running, "200", "50", true));
    }
    items.push_back(std::move(item));
  }
  for (int i = 0; i < neighbours; ++i) {
    json pod = testing::gpuPod("default", "other", i, k1g, "busy");
    run(pod["spec"], pod["metadata"], neighbour);
    items.push_back(std::move(pod));
  }
  return testing::migCluster(items);
}

TEST(PlannerMemoryTest, TimeSlicingLeavesEveryPodItsMemory) {
  struct Row {
    const char* what;
    json dump;
    int replicas;  // the time-slicing the plan sets; 0: none
    std::optional<WhyCode> code;
    const char* detailHas;
  };
  Server annotated;
  annotated.annotations = {{"gpuscale.io/gpu-memory", "2Gi"}};
  Server fraction = vllmServer(json::array());
  fraction.annotations = {{"gpuscale.io/gpu-memory-fraction", "0.3"}};
  const std::vector<Row> rows = {
      {"Triton says nothing: the policy's 4 replicas", cluster({}), 4, std::nullopt, ""},
      {"vLLM at 0.45: two pods per instance",
       cluster(vllmServer({"--model", "m", "--gpu-memory-utilization", "0.45"})), 2,
       WhyCode::kMemoryLimit, "--gpu-memory-utilization, container \"triton\"): 2 pods per device"},
      {"vLLM at its default 0.9: not shared", cluster(vllmServer({"--model", "m"})), 0,
       WhyCode::kMemoryLimit, "its default --gpu-memory-utilization"},
      {"vLLM's value from a variable: refused, not guessed",
       cluster(vllmServer({"--gpu-memory-utilization", "$(UTIL)"})), 0, WhyCode::kMemoryUnknown,
       "\"$(UTIL)\""},
      {"the fraction annotation over vLLM's default", cluster(fraction), 3, WhyCode::kMemoryLimit,
       "annotation gpuscale.io/gpu-memory-fraction"},
      {"2Gi per pod of a 5 GB instance", cluster(annotated), 2, WhyCode::kMemoryLimit,
       "2Gi of each device"},
      {"a vLLM neighbour at its default on the same instances: not shared",
       cluster({}, 6, 1, vllmServer({})), 0, WhyCode::kMemoryLimit, "container \"triton\""},
  };
  for (const Row& row : rows) {
    auto snapshot = testing::snapshotOf(row.dump);
    const PolicySet policies = defaultPolicies();
    auto workloads = assessWorkloads(snapshot, policies);
    const Plan plan = planPartitions(snapshot, workloads, kNow);
    int replicas = 0;
    for (const auto& action : plan.actions) {
      if (const auto* ts = std::get_if<TimeSlicingChange>(&action)) replicas = ts->replicas;
    }
    EXPECT_EQ(replicas, row.replicas) << row.what << "\n" << planToJson(plan).dump(2);
    ASSERT_EQ(plan.why.size(), 1u) << row.what;
    const HpaWhy& why = plan.why.front();
    if (!row.code) {
      EXPECT_FALSE(why.has(WhyCode::kMemoryLimit) || why.has(WhyCode::kMemoryUnknown))
          << row.what << "\n"
          << whyToJson(why).dump(2);
      continue;
    }
    bool found = false;
    for (const WhyReason& r : why.reasons) {
      if (r.code == *row.code && r.node == "busy" &&
          r.detail.find(row.detailHas) != std::string::npos)
        found = true;
    }
    EXPECT_TRUE(found) << row.what << "\n" << whyToJson(why).dump(2);
  }
}

}  // namespace planner_memory_test
}  // namespace gpuscale::partition
