#include "node_resource_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuscale::partition::detail {
namespace node_resource_table_test {

std::vector<NodeState> nodes() {
  NodeState a100;
  a100.name = "a100";
  a100.devices = {{"nvidia.com/mig-1g.5gb", 14}, {"nvidia.com/mig-3g.20gb", 4}};
  a100.used = {{"nvidia.com/mig-1g.5gb.shared", 9}, {"nvidia.com/mig-3g.20gb", 1}};
  a100.sharedReplicas = {{"nvidia.com/mig-1g.5gb", 2}};
  NodeState t4;
  t4.name = "t4";
  t4.devices = {{"nvidia.com/gpu", 8}};
  t4.used = {{"nvidia.com/gpu", 3}};
  NodeState empty;
  empty.name = "cpu";
  return {a100, t4, empty};
}

// Every lookup equals the map it stands for, NodeState::capacityFor included.
TEST(NodeResourceTableTest, MatchesTheNodesMaps) {
  const std::vector<NodeState> ns = nodes();
  const NodeResourceTable table(ns);
  const std::vector<std::string> resources = {"nvidia.com/mig-1g.5gb",
                                              "nvidia.com/mig-1g.5gb.shared",
                                              "nvidia.com/mig-3g.20gb",
                                              "nvidia.com/gpu",
                                              "nvidia.com/gpu.shared",
                                              "nvidia.com/mig-7g.40gb",
                                              ""};
  for (std::size_t i = 0; i < ns.size(); ++i) {
    for (const std::string& r : resources) {
      SCOPED_TRACE(ns[i].name + " " + r);
      auto count = [&](const ResourceCounts& m) {
        auto it = m.find(r);
        return it == m.end() ? 0 : it->second;
      };
      const auto key = table.key(r);
      EXPECT_EQ(table.devices(i, key.resource), count(ns[i].devices));
      EXPECT_EQ(table.used(i, key.resource), count(ns[i].used));
      auto shared = ns[i].sharedReplicas.find(r);
      EXPECT_EQ(table.replicas(i, key.resource),
                shared == ns[i].sharedReplicas.end() ? 1 : shared->second);
      EXPECT_EQ(table.capacity(i, key), ns[i].capacityFor(r));
    }
  }
}

TEST(NodeResourceTableTest, NamesNoNodeHasAreAbsent) {
  const NodeResourceTable table(nodes());
  EXPECT_EQ(table.id("nvidia.com/mig-7g.40gb"), NodeResourceTable::kAbsent);
  EXPECT_NE(table.id("nvidia.com/mig-1g.5gb.shared"), NodeResourceTable::kAbsent);
  // ".shared" is a key of `used` only; its base is a key of `devices`.
  const auto key = table.key("nvidia.com/mig-1g.5gb.shared");
  EXPECT_EQ(key.base, table.id("nvidia.com/mig-1g.5gb"));
  EXPECT_EQ(table.capacity(0, key), 28);
  EXPECT_EQ(table.capacity(2, key), 0);
  const NodeResourceTable none(std::vector<NodeState>{});
  EXPECT_EQ(none.id("nvidia.com/gpu"), NodeResourceTable::kAbsent);
}

}  // namespace node_resource_table_test
}  // namespace gpuscale::partition::detail
