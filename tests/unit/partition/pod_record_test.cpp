#include "gpuscale/partition/pod_record.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "gpuscale/partition/kube_objects.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace pod_record_test {

using testing::json;

json podWith(std::function<void(json&)> edit) {
  json p = testing::gpuPod("ml", "app", 0, "nvidia.com/gpu", "n1");
  edit(p);
  return p;
}

TEST(PodRecordTest, ReadsAPodOnceOrSaysWhyItIsSkipped) {
  struct Row {
    const char* what;
    json pod;
    bool reads;
    std::string skippedReason;    // when it does not read
    bool asTemplate;              // the spec reads as a pod template
    Labels templateNodeSelector;  // then
  };
  const std::vector<Row> rows{
      {"a GPU pod reads, its spec as a template",
       podWith([](json& p) {
         p["spec"]["nodeSelector"] = {{"pool", "a100"}};
       }),
       true,
       "",
       true,
       {{"pool", "a100"}}},
      {"a pod without a spec reads, and lends no template",
       podWith([](json& p) { p.erase("spec"); }),
       true,
       "",
       false,
       {}},
      {"a field of the wrong type is skipped as malformed",
       podWith([](json& p) { p["spec"]["priority"] = "high"; }),
       false,
       "malformed",
       false,
       {}},
      {"a request beyond 2^31 is skipped as out of range",
       podWith([](json& p) {
         p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "3000000000";
       }),
       false,
       "out_of_range",
       false,
       {}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    const PodRecord r = readPodRecord(row.pod);
    ASSERT_EQ(r.pod.has_value(), row.reads);
    ASSERT_EQ(r.skipped.has_value(), !row.reads);
    if (row.reads) {
      EXPECT_EQ(r.pod->name, "app-0");
      EXPECT_EQ(r.pod->ns, "ml");
    } else {
      EXPECT_EQ(r.skipped->kind, "Pod");
      EXPECT_EQ(r.skipped->name, "app-0");
      EXPECT_EQ(r.skipped->reason, row.skippedReason);
      EXPECT_EQ(r.skipped->message, readPod(row.pod).status().message());
    }
    ASSERT_EQ(r.asTemplate.has_value(), row.asTemplate);
    if (row.asTemplate) {
      EXPECT_EQ(r.asTemplate->nodeSelector, row.templateNodeSelector);
    }
  }
}

// What the snapshot takes from the pods, and what it skips, as text to compare.
std::string podView(const ClusterSnapshot& snap) {
  json view = json::array();
  for (const auto& p : snap.pods) {
    view.push_back({p.ns, p.name, p.nodeName, p.phase, p.gpuRequests, p.gpuUse, p.ready});
  }
  for (const auto& n : snap.nodes) view.push_back({n.name, n.used, n.hasGpuPods});
  for (const auto& t : snap.targets) {
    view.push_back({t.kind, t.name, t.gpuRequests, t.nodeSelector, t.gpuMemory.source});
  }
  for (const auto& s : snap.skipped) view.push_back({s.kind, s.name, s.reason, s.message});
  return view.dump();
}

// The reconciler builds its snapshot from Pods read once (its pod cache); a dump gives the same
// Pods as JSON. Both must give the same snapshot, skipped Pods and borrowed templates included.
TEST(PodRecordTest, ASnapshotFromRecordsIsTheSnapshotFromJson) {
  const json custom{{"apiVersion", "serving.example.com/v1"},
                    {"kind", "InferenceGroup"},
                    {"metadata", {{"name", "ig"}, {"namespace", "ml"}, {"uid", "ig-uid"}}},
                    {"spec", {{"replicas", 1}}}};
  json hpa = testing::hpa("ml", "ig", testing::hpaSpec(1, 4, 1, 1, "100", "50", false));
  hpa["spec"]["scaleTargetRef"] = {
      {"apiVersion", "serving.example.com/v1"}, {"kind", "InferenceGroup"}, {"name", "ig"}};
  const json scale{{"apiVersion", "autoscaling/v1"},
                   {"kind", "Scale"},
                   {"metadata", {{"name", "ig"}, {"namespace", "ml"}, {"uid", "ig-uid"}}},
                   {"spec", {{"replicas", 1}}},
                   {"status", {{"replicas", 1}, {"selector", "app=ig"}}}};
  for (const char* dumpName : {"a100_idle_reshape.json", "t4_timeslicing.json"}) {
    SCOPED_TRACE(dumpName);
    json dump = testing::loadDump(dumpName);
    dump["items"].push_back(custom);
    dump["items"].push_back(hpa);
    dump["items"].push_back(scale);
    dump["items"].push_back(podWith([](json& p) {
      p["metadata"]["name"] = "ig-0";
      p["metadata"]["labels"] = {{"app", "ig"}};
      p["spec"]["nodeSelector"] = {{"pool", "a100"}};
    }));
    dump["items"].push_back(podWith([](json& p) { p["spec"]["priority"] = "high"; }));
    const ClusterSnapshot fromJson = testing::snapshotOf(dump);

    std::vector<KubeItem> items;
    for (const auto& item : dump["items"]) {
      if (item["kind"] == "Pod") {
        items.push_back({"Pod", nullptr, std::make_shared<const PodRecord>(readPodRecord(item))});
      } else {
        items.push_back({{}, &item});
      }
    }
    auto fromRecords = buildSnapshot(items);
    ASSERT_TRUE(fromRecords.ok()) << fromRecords.status().toString();
    EXPECT_EQ(podView(*fromRecords), podView(fromJson));
    // The snapshot points at the records' pods (no copy), and keeps them alive without the items.
    std::set<const PodState*> recorded;
    for (const auto& item : items) {
      if (item.pod && item.pod->pod) recorded.insert(&*item.pod->pod);
    }
    items.clear();
    ASSERT_FALSE(fromRecords->pods.empty());
    for (std::size_t i = 0; i < fromRecords->pods.size(); ++i) {
      EXPECT_TRUE(recorded.contains(&fromRecords->pods[i])) << fromRecords->pods[i].name;
      EXPECT_TRUE(fromRecords->pods.shared(i));
    }
    EXPECT_EQ(podView(*fromRecords), podView(fromJson));
    ASSERT_EQ(fromJson.skipped.size(), 1u);
    EXPECT_EQ(fromJson.skipped[0].reason, "malformed");
    const ScaleTarget* ig = fromJson.target("ml", "InferenceGroup", "ig");
    ASSERT_NE(ig, nullptr);
    EXPECT_EQ(ig->nodeSelector, (Labels{{"pool", "a100"}})) << "borrowed from its pod";
  }
}

}  // namespace pod_record_test
}  // namespace gpuscale::partition
