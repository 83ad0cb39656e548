#include "gpuscale/partition/object_record.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kube_objects.h"

namespace gpuscale::partition {
namespace object_record_test {

using testing::json;

json edited(json object, const std::function<void(json&)>& edit) {
  edit(object);
  return object;
}

TEST(ObjectRecordTest, ReadsEachKindOnceOrSaysWhyItIsSkipped) {
  const json node =
      testing::migNode("n1", "NVIDIA-A100-SXM4-40GB", 1, "all-1g.5gb", {{"1g.5gb", 7}});
  const json hpa = testing::hpa("ml", "web", testing::hpaSpec(1, 4, 2, 2, "100", "50", false));
  const json deployment = testing::deployment("ml", "web", 2, "nvidia.com/gpu");
  json statefulSet = deployment;
  statefulSet["kind"] = "StatefulSet";
  struct Row {
    const char* what;
    std::string kind;
    json object;
    std::size_t alternative;    // of ObjectRecord::value when it reads (0: skipped)
    std::string skippedReason;  // when it does not read
  };
  const std::vector<Row> rows{
      {"a node reads", "Node", node, 1, ""},
      {"a node with a label of the wrong type is malformed", "Node",
       edited(node, [](json& n) { n["metadata"]["labels"]["nvidia.com/mig.config"] = 7; }), 0,
       "malformed"},
      {"an HPA reads", "HorizontalPodAutoscaler", hpa, 2, ""},
      {"an HPA whose maxReplicas is no number is malformed", "HorizontalPodAutoscaler",
       edited(hpa, [](json& h) { h["spec"]["maxReplicas"] = "four"; }), 0, "malformed"},
      {"a Deployment reads", "Deployment", deployment, 3, ""},
      {"a StatefulSet reads", "StatefulSet", statefulSet, 3, ""},
      {"a Deployment asking beyond 2^31 GPUs is out of range", "Deployment",
       edited(deployment,
              [](json& d) {
                d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
                 ["nvidia.com/gpu"] = "3000000000";
              }),
       0, "out_of_range"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    ASSERT_TRUE(readsAsRecord(row.kind));
    const ObjectRecord r = readObjectRecord(row.kind, row.object);
    EXPECT_EQ(r.value.index(), row.alternative);
    ASSERT_EQ(r.skipped.has_value(), row.alternative == 0);
    if (row.alternative == 3) {
      EXPECT_EQ(std::get<ScaleTarget>(r.value).kind, row.kind);
      EXPECT_EQ(std::get<ScaleTarget>(r.value).specReplicas, 2);
    }
    if (r.skipped) {
      EXPECT_EQ(r.skipped->kind, row.kind);
      EXPECT_EQ(r.skipped->name, row.object["metadata"]["name"].get<std::string>());
      EXPECT_EQ(r.skipped->reason, row.skippedReason);
    }
  }
  for (const char* kind : {"Pod", "ConfigMap", "ScaledObject", "Scale", "ResourceSlice", ""}) {
    EXPECT_FALSE(readsAsRecord(kind)) << kind;
  }
}

// What the snapshot takes from nodes, HPAs and workloads, and what it skips, as text to compare.
std::string view(const ClusterSnapshot& snap) {
  json out = json::array();
  for (const auto& n : snap.nodes) {
    json gpus = json::array();
    for (const auto& g : n.gpus) gpus.push_back({g.index, g.setting.migEnabled, g.busy});
    out.push_back({n.name, n.labels, n.migConfig, n.geometryKnown, gpus, n.allocatable, n.used,
                   n.sharedReplicas, n.hasGpuPods, n.schedulable});
  }
  for (const auto& h : snap.hpas) {
    out.push_back({h.ns, h.name, h.minReplicas, h.maxReplicas, h.currentReplicas, h.desiredReplicas,
                   h.targetKind, h.targetName, h.metrics.size()});
  }
  for (const auto& t : snap.targets) {
    out.push_back({t.kind, t.ns, t.name, t.specReplicas, t.selector, t.gpuRequests});
  }
  for (const auto& s : snap.skipped) out.push_back({s.kind, s.name, s.reason, s.message});
  return out.dump();
}

// The reconciler builds its snapshot from Nodes, HPAs and workloads read once (its caches); a dump
// gives them as JSON. Both give the same snapshot, skipped objects included, and the snapshot does
// not need the records' holders to keep them.
TEST(ObjectRecordTest, ASnapshotFromRecordsIsTheSnapshotFromJson) {
  for (const char* dumpName : {"a100_idle_reshape.json", "t4_timeslicing.json"}) {
    SCOPED_TRACE(dumpName);
    json dump = testing::loadDump(dumpName);
    dump["items"].push_back(testing::gpuNode("bad", {{"nvidia.com/gpu.count", "x"}}, {}));
    dump["items"].back()["metadata"]["labels"]["nvidia.com/gpu.count"] = 8;
    json badHpa = testing::hpa("ml", "bad", testing::hpaSpec(1, 4, 2, 2, "100", "50", false));
    badHpa["spec"]["minReplicas"] = "one";
    dump["items"].push_back(badHpa);
    const ClusterSnapshot fromJson = testing::snapshotOf(dump);

    std::vector<KubeItem> items;
    for (const auto& item : dump["items"]) {
      const std::string& kind = item["kind"].get_ref<const std::string&>();  // in the dump
      if (readsAsRecord(kind)) {
        items.push_back({kind, nullptr, nullptr,
                         std::make_shared<const ObjectRecord>(readObjectRecord(kind, item))});
      } else {
        items.push_back({{}, &item});
      }
    }
    auto fromRecords = buildSnapshot(items);
    items.clear();
    ASSERT_TRUE(fromRecords.ok()) << fromRecords.status().toString();
    EXPECT_FALSE(fromJson.nodes.empty());
    EXPECT_FALSE(fromJson.hpas.empty());
    EXPECT_EQ(view(*fromRecords), view(fromJson));
    std::vector<std::string> skippedNames;
    for (const auto& s : fromJson.skipped) skippedNames.push_back(s.kind + " " + s.name);
    EXPECT_EQ(skippedNames, (std::vector<std::string>{"Node bad", "HorizontalPodAutoscaler bad"}));
  }
}

}  // namespace object_record_test
}  // namespace gpuscale::partition
