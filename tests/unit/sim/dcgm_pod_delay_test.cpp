#include "gpuscale/sim/dcgm_pod_delay.h"

#include <gtest/gtest.h>

namespace gpuscale::sim {
namespace dcgm_pod_delay_test {

using std::chrono::seconds;
using Clock = DcgmPodDelay::Clock;

NodeGpuView nodeWith(const std::vector<std::pair<std::string, std::string>>& pods) {
  NodeGpuView node;
  node.spec.name = "n";
  for (const auto& [uid, device] : pods) {
    PodDevice p;
    p.uid = uid;
    p.name = "pod-" + uid;
    p.device = device;
    node.pods.push_back(p);
  }
  return node;
}

std::vector<std::string> named(const std::vector<NodeGpuView>& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes) {
    for (const auto& p : n.pods) out.push_back(p.uid);
  }
  return out;
}

TEST(DcgmPodDelayTest, NamesAPodOnlyAfterTheDelay) {
  const Clock::time_point t0{seconds(1000)};
  struct Step {
    const char* what;
    std::vector<std::pair<std::string, std::string>> pods;  // uid, device
    int at;                                                 // seconds after t0
    std::vector<std::string> want;
  };
  // One delay object across the steps, in order.
  const std::vector<Step> steps{
      {"a pod just placed is not named yet", {{"a", "n/gpu0/x/0"}}, 0, {}},
      {"still within the delay", {{"a", "n/gpu0/x/0"}}, 9, {}},
      {"named once it held the device for the delay", {{"a", "n/gpu0/x/0"}}, 10, {"a"}},
      {"a second pod waits its own delay", {{"a", "n/gpu0/x/0"}, {"b", "n/gpu0/x/1"}}, 12, {"a"}},
      {"a pod moved to another device waits again",
       {{"a", "n/gpu1/x/0"}, {"b", "n/gpu0/x/1"}},
       22,
       {"b"}},
      {"a pod that left is forgotten", {{"b", "n/gpu0/x/1"}}, 23, {"b"}},
      {"and waits again if it comes back", {{"a", "n/gpu1/x/0"}, {"b", "n/gpu0/x/1"}}, 24, {"b"}},
  };
  DcgmPodDelay delay(seconds(10));
  for (const auto& step : steps) {
    EXPECT_EQ(named(delay.apply({nodeWith(step.pods)}, t0 + seconds(step.at))), step.want)
        << step.what;
  }
}

TEST(DcgmPodDelayTest, NoDelayNamesEveryPod) {
  DcgmPodDelay delay(std::chrono::milliseconds(0));
  EXPECT_EQ(named(delay.apply({nodeWith({{"a", "d"}})}, Clock::time_point{})),
            std::vector<std::string>{"a"});
}

}  // namespace dcgm_pod_delay_test
}  // namespace gpuscale::sim
