#include "gpuscale/partition/pod_list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {
namespace pod_list_test {

PodState pod(std::string ns, std::string name) {
  PodState p;
  p.ns = std::move(ns);
  p.name = std::move(name);
  return p;
}

std::vector<std::string> names(const PodList& list) {
  std::vector<std::string> out;
  for (const PodState& p : list) out.push_back(p.ns + "/" + p.name);
  return out;
}

TEST(PodListTest, SharesWhatItIsGivenAndCopiesOnlyWhatItChanges) {
  const auto a = std::make_shared<const PodState>(pod("ml", "a"));
  const auto b = std::make_shared<const PodState>(pod("ml", "b"));
  PodList list;
  list.push_back(a);
  list.push_back(b);
  list.push_back(pod("web", "c"));
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(names(list), (std::vector<std::string>{"ml/a", "ml/b", "web/c"}));
  EXPECT_EQ(&list[0], a.get()) << "shared, not copied";
  EXPECT_EQ(&list.front(), a.get());
  EXPECT_TRUE(list.shared(0));
  EXPECT_FALSE(list.shared(2)) << "a value is the list's own";

  // Changing a shared pod gives the list its own copy; the sharer's pod stays as it was.
  list.mutableAt(1).gpuRequests["nvidia.com/gpu"] = 2;
  EXPECT_NE(&list[1], b.get());
  EXPECT_FALSE(list.shared(1));
  EXPECT_TRUE(b->gpuRequests.empty());
  EXPECT_EQ(list[1].gpuRequests.at("nvidia.com/gpu"), 2);
  // The second change goes to the same copy.
  const PodState* copy = &list[1];
  list.mutableAt(1).phase = "Running";
  EXPECT_EQ(&list[1], copy);
  EXPECT_EQ(list[1].gpuRequests.at("nvidia.com/gpu"), 2);

  // A random-access range: what the snapshot's readers do with it (binary search by namespace).
  auto web = std::lower_bound(list.begin(), list.end(), std::string("web"),
                              [](const PodState& p, const std::string& ns) { return p.ns < ns; });
  ASSERT_NE(web, list.end());
  EXPECT_EQ(web->name, "c");
  EXPECT_EQ(web - list.begin(), 2);
  EXPECT_EQ(std::count_if(list.begin(), list.end(), [](const PodState& p) { return p.ns == "ml"; }),
            2);
  EXPECT_TRUE(PodList().empty());
}

}  // namespace pod_list_test
}  // namespace gpuscale::partition
