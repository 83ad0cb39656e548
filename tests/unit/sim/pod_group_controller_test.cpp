// gpuscale-sim's stand-in for LeaderWorkerSet's controller: groups of pods named and labelled as
// LeaderWorkerSet makes them, kept in step with spec.replicas, and the status its scale
// subresource reads.
#include "gpuscale/sim/pod_group_controller.h"

#include <gtest/gtest.h>

#include <thread>

#include "fakes/fake_kube_client.h"
#include "support/wait_until.h"

namespace gpuscale::sim {
namespace pod_group_controller_test {

using gpuscale::testing::eventually;

using nlohmann::json;
using namespace std::chrono_literals;

const kube::ResourceRef kSets =
    kube::ResourceRef::collection("leaderworkerset.x-k8s.io", "v1", "leaderworkersets");

// "name group worker" of each pod, sorted.
std::vector<std::string> podsOf(gpuscale::testing::FakeKubeClient& fake) {
  std::vector<std::string> out;
  auto list = fake.list(kube::ResourceRef::collection("", "v1", "pods"), {});
  if (!list) return out;
  for (const auto& p : list->items) {
    const json& labels = p["metadata"]["labels"];
    out.push_back(p["metadata"]["name"].get<std::string>() + " " +
                  labels.value("leaderworkerset.sigs.k8s.io/group-index", "?") + " " +
                  labels.value("leaderworkerset.sigs.k8s.io/worker-index", "?") + " " +
                  labels.value("app", "?"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(PodGroupControllerTest, KeepsGroupsOfPodsAndTheScaleStatus) {
  auto fake = std::make_shared<gpuscale::testing::FakeKubeClient>();
  const json set{{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
                 {"kind", "LeaderWorkerSet"},
                 {"metadata", {{"name", "llm"}, {"namespace", "default"}, {"uid", "u1"}}},
                 {"spec",
                  {{"replicas", 2},
                   {"leaderWorkerTemplate",
                    {{"size", 3},
                     {"workerTemplate",
                      {{"metadata", {{"labels", {{"app", "llm"}}}}},
                       {"spec", {{"containers", json::array({{{"name", "c"}}})}}}}}}}}}};
  ASSERT_TRUE(fake->create(kSets.inNamespace("default"), set).ok());
  PodGroupController controller(fake, kSets);
  controller.start();
  const std::vector<std::string> two{"llm-0 0 0 llm", "llm-0-1 0 1 llm", "llm-0-2 0 2 llm",
                                     "llm-1 1 0 llm", "llm-1-1 1 1 llm", "llm-1-2 1 2 llm"};
  EXPECT_TRUE(eventually([&] { return podsOf(*fake) == two; }))
      << ::testing::PrintToString(podsOf(*fake));
  auto status = [&] {
    auto o = fake->get(kSets.inNamespace("default").named("llm"));
    return o ? o->value("status", json::object()) : json();
  };
  EXPECT_TRUE(eventually([&] {
    return status() == json{{"replicas", 2},
                            {"hpaPodSelector",
                             "leaderworkerset.sigs.k8s.io/name=llm,"
                             "leaderworkerset.sigs.k8s.io/worker-index=0"}};
  })) << status();
  auto pod = fake->get(kube::ResourceRef::collection("", "v1", "pods", "default").named("llm-1-2"));
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)["metadata"]["ownerReferences"][0]["uid"], "u1");

  // Scaled down to one group: the second group's pods go.
  ASSERT_TRUE(fake->patch(kSets.inNamespace("default").named("llm"), kube::PatchType::kMerge,
                          {{"spec", {{"replicas", 1}}}})
                  .ok());
  const std::vector<std::string> one(two.begin(), two.begin() + 3);
  EXPECT_TRUE(eventually([&] { return podsOf(*fake) == one; }))
      << ::testing::PrintToString(podsOf(*fake));
  controller.stop();
}

}  // namespace pod_group_controller_test
}  // namespace gpuscale::sim
