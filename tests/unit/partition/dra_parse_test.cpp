#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dra_objects.h"
#include "gpuscale/partition/dra_objects.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/snapshot.h"
#include "kube_objects.h"

namespace gpuscale::partition {
namespace dra_parse_test {

using nlohmann::json;

TEST(DraParseTest, ReadsASliceAsTheSchedulerSeesIt) {
  json slice =
      testing::draSlice("n1",
                        {testing::draGpuDevice(0),
                         testing::draMigDevice(1, "1g.5gb", 0, "4864Mi", "gpu-1-counter-set",
                                               {{"memory", "4864Mi"}, {"memory-slice-0", "1"}})},
                        3, 2, {testing::draCounterSet("gpu-1-counter-set", {{"memory", "40Gi"}})});
  json& devices = slice["spec"]["devices"];
  devices[0]["attributes"]["resource.kubernetes.io/numaNode"] = {{"ints", {0, 1}}};  // a list
  devices[0]["taints"] = {{{"key", "k"}, {"effect", "None"}}};
  devices[1]["taints"] = {{{"key", "k"}, {"effect", "NoSchedule"}}};
  auto s = readResourceSlice(slice);
  ASSERT_TRUE(s.ok()) << s.status().toString();
  EXPECT_EQ(s->driver, "gpu.nvidia.com");
  EXPECT_EQ(s->pool, "n1");
  EXPECT_EQ(s->nodeName, "n1");
  EXPECT_EQ(s->generation, 3);
  EXPECT_EQ(s->sliceCount, 2);
  ASSERT_EQ(s->devices.size(), 2u);
  const DraDevice& gpu = s->devices[0];
  EXPECT_EQ(gpu.name, "gpu-0");
  // Names without a domain get the driver's; the standard ones keep theirs.
  ASSERT_NE(gpu.attribute("gpu.nvidia.com", "type"), nullptr);
  EXPECT_EQ(gpu.attribute("gpu.nvidia.com", "type")->text, "gpu");
  EXPECT_EQ(gpu.attributes.at("gpu.nvidia.com/driverVersion").type, DraValue::Type::kVersion);
  EXPECT_TRUE(gpu.attributes.contains("resource.kubernetes.io/pcieRoot"));
  EXPECT_FALSE(gpu.attributes.contains("resource.kubernetes.io/numaNode")) << "a list: left out";
  EXPECT_EQ(gpu.capacity.at("gpu.nvidia.com/memory"), "40Gi");
  EXPECT_FALSE(gpu.tainted) << "effect None only informs";
  const DraDevice& mig = s->devices[1];
  EXPECT_TRUE(mig.tainted);
  ASSERT_EQ(mig.consumesCounters.size(), 1u);
  EXPECT_EQ(mig.consumesCounters[0].counterSet, "gpu-1-counter-set");
  EXPECT_EQ(mig.consumesCounters[0].counters.at("memory"), 4864LL << 20);
  EXPECT_EQ(mig.consumesCounters[0].counters.at("memory-slice-0"), 1);
  ASSERT_EQ(s->sharedCounters.size(), 1u);
  EXPECT_EQ(s->sharedCounters[0].counters.at("memory"), 40LL << 30);
}

// Objects the API accepts that do not read: an error naming the field (malformed), or, for what
// the planner does not model, reason Unsupported.
TEST(DraParseTest, ObjectsThatDoNotReadSayWhy) {
  struct Row {
    const char* what;
    json slice;
    std::string reason;    // "" = reads
    std::string fragment;  // of the message
  };
  json badCounter = testing::draSlice("n", {}, 1, 1, {testing::draCounterSet("s", {{"c", "x"}})});
  json badAttribute = testing::draSlice("n", {testing::draGpuDevice(0)});
  badAttribute["spec"]["devices"][0]["attributes"]["type"] = "gpu";
  json allNodes = testing::draSlice("n", {testing::draGpuDevice(0)});
  allNodes["spec"].erase("nodeName");
  allNodes["spec"]["allNodes"] = true;
  json otherDriver = allNodes;
  otherDriver["spec"]["driver"] = "compute-domain.nvidia.com";
  json badGeneration = testing::draSlice("n", {});
  badGeneration["spec"]["pool"]["generation"] = "1";
  const std::vector<Row> rows{
      {"a counter that is no quantity", badCounter, "Invalid", "sharedCounters.c"},
      {"an attribute that is no object", badAttribute, "Invalid", "attributes.type"},
      {"a generation that is no integer", badGeneration, "Invalid", "generation"},
      {"a GPU slice for every node", allNodes, std::string(kDraUnsupportedReason),
       "for more than one node"},
      {"another driver's slice for every node", otherDriver, "", ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto s = readResourceSlice(row.slice);
    if (row.reason.empty()) {
      EXPECT_TRUE(s.ok()) << s.status().toString();
      continue;
    }
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().reason(), row.reason);
    EXPECT_NE(s.status().message().find(row.fragment), std::string::npos) << s.status().message();
  }
}

TEST(DraParseTest, ReadsDeviceClassesTemplatesAndClaims) {
  auto cls = readDeviceClass(testing::draDeviceClass("mig.nvidia.com", "mig"));
  ASSERT_TRUE(cls.ok()) << cls.status().toString();
  EXPECT_EQ(cls->meta.name, "mig.nvidia.com");
  ASSERT_EQ(cls->selectors.size(), 1u);
  EXPECT_NE(cls->selectors[0].find("type == 'mig'"), std::string::npos);

  auto tmpl = readResourceClaimTemplate(
      testing::draClaimTemplate("ml", "one-slice", "mig.nvidia.com", 2, {"true"}));
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().toString();
  EXPECT_EQ(tmpl->meta.ns, "ml");
  ASSERT_EQ(tmpl->spec.requests.size(), 1u);
  const DraClaimRequest& r = tmpl->spec.requests[0];
  EXPECT_FALSE(r.firstAvailable);
  ASSERT_EQ(r.alternatives.size(), 1u);
  EXPECT_EQ(r.alternatives[0].deviceClassName, "mig.nvidia.com");
  EXPECT_EQ(r.alternatives[0].count, 2);
  EXPECT_EQ(r.alternatives[0].allocationMode, "ExactCount");
  EXPECT_EQ(r.alternatives[0].selectors, std::vector<std::string>{"true"});

  // firstAvailable, v1beta1's inline request, constraints, adminAccess and capacity requests.
  json spec{{"devices",
             {{"requests",
               {{{"name", "a"},
                 {"firstAvailable",
                  {{{"name", "big"}, {"deviceClassName", "gpu.nvidia.com"}},
                   {{"name", "small"}, {"deviceClassName", "mig.nvidia.com"}}}}},
                {{"name", "b"}, {"deviceClassName", "mig.nvidia.com"}, {"adminAccess", true}},
                {{"name", "c"},
                 {"exactly",
                  {{"deviceClassName", "gpu.nvidia.com"},
                   {"allocationMode", "All"},
                   {"capacity", {{"requests", {{"memory", "10Gi"}}}}}}}}}},
              {"constraints", {{{"requests", {"a", "c"}}, {"matchAttribute", "x"}}}}}}};
  auto claim = readResourceClaim({{"kind", "ResourceClaim"},
                                  {"metadata", {{"name", "c"}, {"namespace", "ml"}}},
                                  {"spec", spec}});
  ASSERT_TRUE(claim.ok()) << claim.status().toString();
  const DraClaimSpec& s = claim->spec;
  ASSERT_EQ(s.requests.size(), 3u);
  EXPECT_TRUE(s.requests[0].firstAvailable);
  ASSERT_EQ(s.requests[0].alternatives.size(), 2u);
  EXPECT_EQ(s.requests[0].alternatives[1].name, "a/small");
  EXPECT_TRUE(s.requests[1].alternatives.at(0).adminAccess);
  EXPECT_EQ(s.requests[2].alternatives.at(0).allocationMode, "All");
  EXPECT_TRUE(s.requests[2].alternatives.at(0).consumesCapacity);
  EXPECT_TRUE(s.constraints);
  EXPECT_TRUE(claim->allocated.empty());

  auto allocated = readResourceClaim(testing::draClaim("ml", "w-0-gpu", "w-0", "n1", "gpu-0"));
  ASSERT_TRUE(allocated.ok()) << allocated.status().toString();
  ASSERT_EQ(allocated->allocated.size(), 1u);
  EXPECT_EQ(allocated->allocated[0].pool, "n1");
  EXPECT_EQ(allocated->allocated[0].device, "gpu-0");
  EXPECT_EQ(allocated->reservedForPods, std::vector<std::string>{"w-0"});
}

// A pod's spec.resourceClaims, with the claims made from its templates; a workload's template.
TEST(DraParseTest, ReadsThePodsClaimReferences) {
  json podSpec{{"containers", {{{"name", "c"}, {"resources", {{"claims", {{{"name", "gpu"}}}}}}}}},
               {"resourceClaims",
                {{{"name", "gpu"}, {"resourceClaimTemplateName", "one-slice"}},
                 {{"name", "shared"}, {"resourceClaimName", "team-gpu"}}}}};
  auto pod = readPod(
      {{"kind", "Pod"},
       {"metadata", {{"name", "w-0"}, {"namespace", "ml"}}},
       {"spec", podSpec},
       {"status",
        {{"resourceClaimStatuses", {{{"name", "gpu"}, {"resourceClaimName", "w-0-gpu-x7"}}}}}}});
  ASSERT_TRUE(pod.ok()) << pod.status().toString();
  const std::vector<PodClaimRef> expected{{"gpu", "one-slice", "w-0-gpu-x7"},
                                          {"shared", "", "team-gpu"}};
  EXPECT_EQ(pod->claims, expected);
  EXPECT_TRUE(pod->usesGpu());

  auto workload = readWorkload({{"kind", "Deployment"},
                                {"metadata", {{"name", "w"}, {"namespace", "ml"}}},
                                {"spec", {{"template", {{"spec", podSpec}}}}}},
                               "Deployment");
  ASSERT_TRUE(workload.ok()) << workload.status().toString();
  const std::vector<PodClaimRef> fromTemplate{{"gpu", "one-slice", ""}, {"shared", "", "team-gpu"}};
  EXPECT_EQ(workload->claims, fromTemplate);
}

// In a snapshot, a DRA object that does not read is skipped with its reason like any other.
TEST(DraParseTest, TheSnapshotSkipsDraObjectsThatDoNotRead) {
  json allNodes = testing::draSlice("n", {testing::draGpuDevice(0)});
  allNodes["spec"].erase("nodeName");
  allNodes["spec"]["allNodes"] = true;
  json badClass = testing::draDeviceClass("c", "gpu");
  badClass["spec"]["selectors"][0]["cel"]["expression"] = 3;
  auto snap = buildSnapshot(testing::list({allNodes, badClass}));
  ASSERT_TRUE(snap.ok()) << snap.status().toString();
  ASSERT_EQ(snap->skipped.size(), 2u);
  EXPECT_EQ(snap->skipped[0].kind, "ResourceSlice");
  EXPECT_EQ(snap->skipped[0].reason, "unsupported");
  EXPECT_EQ(snap->skipped[1].kind, "DeviceClass");
  EXPECT_EQ(snap->skipped[1].name, "c");
  EXPECT_EQ(snap->skipped[1].reason, "malformed");
}

}  // namespace dra_parse_test
}  // namespace gpuscale::partition
