#include "gpuscale/sim/node_objects.h"

#include <gtest/gtest.h>

namespace gpuscale::sim {
namespace node_objects_test {

kube::Object nodeWith(kube::Object labels, kube::Object allocatable) {
  return {{"metadata", {{"name", "n"}, {"labels", labels}}},
          {"status", {{"capacity", allocatable}, {"allocatable", allocatable}}}};
}

struct LabelCase {
  const char* what;
  kube::Object current;
  Labels desired;
  kube::Object patch;
};

TEST(NodeObjectsTest, LabelPatch) {
  const LabelCase cases[] = {
      {"nothing differs: empty patch",
       {{"nvidia.com/gpu.count", "1"}},
       {{"nvidia.com/gpu.count", "1"}},
       kube::Object::object()},
      {"a changed and a new label",
       {{"nvidia.com/gpu.count", "1"}},
       {{"nvidia.com/gpu.count", "2"}, {"nvidia.com/mig.config.state", "pending"}},
       {{"nvidia.com/gpu.count", "2"}, {"nvidia.com/mig.config.state", "pending"}}},
      {"a stale GFD label is deleted",
       {{"nvidia.com/mig-1g.5gb.count", "7"}},
       {},
       {{"nvidia.com/mig-1g.5gb.count", nullptr}}},
      {"labels the emulator does not own are kept",
       {{"pool", "gpu"},
        {"nvidia.com/mig.config", "all-1g.5gb"},
        {"nvidia.com/device-plugin.config", "ts-4"}},
       {},
       kube::Object::object()},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(labelPatch(nodeWith(c.current, kube::Object::object()), c.desired), c.patch)
        << c.what;
  }
}

struct StatusCase {
  const char* what;
  kube::Object current;
  ResourceCounts capacity, allocatable;
  kube::Object patch;
};

TEST(NodeObjectsTest, StatusPatch) {
  const kube::Object seven = {{"cpu", "32"}, {"nvidia.com/mig-1g.5gb", "7"}};
  const StatusCase cases[] = {
      {"unchanged: empty",
       seven,
       {{"nvidia.com/mig-1g.5gb", 7}},
       {{"nvidia.com/mig-1g.5gb", 7}},
       kube::Object::object()},
      {"paused: allocatable 0, capacity kept",
       seven,
       {{"nvidia.com/mig-1g.5gb", 7}},
       {{"nvidia.com/mig-1g.5gb", 0}},
       {{"allocatable", {{"nvidia.com/mig-1g.5gb", "0"}}}}},
      {"reshaped: old resource removed, new ones added, cpu untouched",
       seven,
       {{"nvidia.com/mig-3g.20gb", 2}},
       {{"nvidia.com/mig-3g.20gb", 2}},
       {{"capacity", {{"nvidia.com/mig-1g.5gb", nullptr}, {"nvidia.com/mig-3g.20gb", "2"}}},
        {"allocatable", {{"nvidia.com/mig-1g.5gb", nullptr}, {"nvidia.com/mig-3g.20gb", "2"}}}}},
  };
  for (const auto& c : cases) {
    NodeAdvertisement adv;
    adv.capacity = c.capacity;
    adv.allocatable = c.allocatable;
    EXPECT_EQ(statusPatch(nodeWith(kube::Object::object(), c.current), adv), c.patch) << c.what;
  }
}

TEST(NodeObjectsTest, NewNodeForKwok) {
  GpuNodeSpec spec;
  spec.name = "gpu-0";
  spec.labels = {{"pool", "gpu"}, {"nvidia.com/gpu.count", "overridden"}};
  NodeAdvertisement adv;
  adv.capacity = adv.allocatable = {{"nvidia.com/gpu", 4}};
  const auto node =
      newNodeObject(spec, {{"nvidia.com/gpu.count", "4"}}, adv, "kwok.x-k8s.io/node", "fake");
  EXPECT_EQ(node["metadata"]["annotations"]["kwok.x-k8s.io/node"], "fake");
  EXPECT_EQ(node["metadata"]["labels"]["kubernetes.io/hostname"], "gpu-0");
  EXPECT_EQ(node["metadata"]["labels"]["pool"], "gpu");
  EXPECT_EQ(node["metadata"]["labels"]["nvidia.com/gpu.count"], "4") << "GFD labels win";
  EXPECT_EQ(node["status"]["allocatable"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(node["status"]["capacity"]["pods"], "110");
  EXPECT_EQ(node["status"]["phase"], "Running");
  EXPECT_FALSE(node["spec"].contains("taints")) << "pods need no toleration";
}

}  // namespace node_objects_test
}  // namespace gpuscale::sim
