// The one reader of Kubernetes objects (kube_objects.h): what it understands of Nodes, HPAs,
// ConfigMaps and Leases, and what it reports as an error naming the field.
#include "gpuscale/partition/kube_objects.h"

#include <gtest/gtest.h>

namespace gpuscale::partition {
namespace kube_objects_test {

using nlohmann::json;

json node(json allocatable, json taints = json::array()) {
  return {{"kind", "Node"},
          {"metadata", {{"name", "n"}, {"uid", "u1"}, {"resourceVersion", "42"}}},
          {"spec", {{"taints", std::move(taints)}}},
          {"status", {{"allocatable", std::move(allocatable)}}}};
}

TEST(KubeObjectsTest, NodeAllocatableIsAQuantityRoundedUp) {
  struct Row {
    const char* what;
    json value;
    std::optional<std::int64_t> units;  // nullopt: the node does not read
  };
  const std::vector<Row> rows{
      {"a whole number", "14", 14},
      {"milli units, as a quantity may be written", "14000m", 14},
      {"a fraction rounds up", "1.5", 2},
      {"an exponent", "2e1", 20},
      {"a number in a hand-written dump", 7, 7},
      {"zero", "0", 0},
      {"not a quantity", "lots", std::nullopt},
      {"negative", "-1", std::nullopt},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto n = readNode(node({{"nvidia.com/mig-1g.5gb", row.value}, {"cpu", "junk is not read"}}));
    ASSERT_EQ(n.ok(), row.units.has_value()) << (n.ok() ? "" : n.status().toString());
    if (!n.ok()) {
      EXPECT_NE(n.status().message().find("allocatable.nvidia.com/mig-1g.5gb"), std::string::npos);
      continue;
    }
    EXPECT_EQ(n->allocatable.at("nvidia.com/mig-1g.5gb"), *row.units);
    EXPECT_FALSE(n->allocatable.contains("cpu"));
  }
}

TEST(KubeObjectsTest, NodeMetadataAndTaints) {
  auto n =
      readNode(node(json::object(), {{{"key", "a"}, {"value", "x"}, {"effect", "NoSchedule"}},
                                     {{"key", "b"}, {"effect", "NoExecute"}, {"timeAdded", "t"}}}));
  ASSERT_TRUE(n.ok()) << n.status().toString();
  EXPECT_EQ(n->meta.name, "n");
  EXPECT_EQ(n->meta.uid, "u1");
  EXPECT_EQ(n->meta.resourceVersion, "42");
  EXPECT_EQ(n->taints,
            (std::vector<Taint>{{"a", "x", "NoSchedule", ""}, {"b", "", "NoExecute", "t"}}));
  EXPECT_EQ(n->meta.label("absent"), "");
}

// HPA metrics as the HPA controller reads them: kube-apiserver checks that `type` is one of
// Utilization|Value|AverageValue and which fields are set per source, not that they agree.
TEST(KubeObjectsTest, HpaMetricTargetsAreReadAsTheControllerReadsThem) {
  struct Row {
    const char* what;
    std::string type;  // the metric source type
    json target;
    json current;            // status.currentMetrics[0].<source>.current
    std::string targetType;  // "" = no usable target (the metric proposes nothing)
    double value = 0;
    std::optional<double> now;
  };
  const std::vector<Row> rows{
      {"Pods AverageValue",
       "Pods",
       {{"type", "AverageValue"}, {"averageValue", "50"}},
       {{"averageValue", "60"}},
       "AverageValue",
       50,
       60},
      {"Pods with type Value and averageValue",
       "Pods",
       {{"type", "Value"}, {"averageValue", "50"}},
       {{"averageValue", "500m"}},
       "AverageValue",
       50,
       0.5},
      {"External Value with averageValue",
       "External",
       {{"type", "Value"}, {"averageValue", "1"}},
       {{"averageValue", "2"}},
       "AverageValue",
       1,
       2},
      {"External Value",
       "External",
       {{"type", "Value"}, {"value", "2"}},
       {{"value", "3"}},
       "Value",
       2,
       3},
      {"External Utilization with averageValue",
       "External",
       {{"type", "Utilization"}, {"averageValue", "3"}},
       json::object(),
       "AverageValue",
       3,
       std::nullopt},
      {"Resource AverageValue with averageUtilization",
       "Resource",
       {{"type", "AverageValue"}, {"averageUtilization", 50}},
       {{"averageUtilization", 70}},
       "Utilization",
       50,
       70},
      {"Resource Value with averageUtilization",
       "Resource",
       {{"type", "Value"}, {"averageUtilization", 80}},
       json::object(),
       "Utilization",
       80,
       std::nullopt},
      {"ContainerResource AverageValue",
       "ContainerResource",
       {{"type", "AverageValue"}, {"averageValue", "500m"}},
       {{"averageValue", "1"}},
       "AverageValue",
       0.5,
       1},
      {"Object Value",
       "Object",
       {{"type", "Value"}, {"value", "10"}},
       {{"value", "20"}},
       "Value",
       10,
       20},
      {"Object with both fields, AverageValue",
       "Object",
       {{"type", "AverageValue"}, {"value", "1"}, {"averageValue", "10"}},
       {{"averageValue", "5"}},
       "AverageValue",
       10,
       5},
      {"Object Value with only averageValue: the controller fails it",
       "Object",
       {{"type", "Value"}, {"averageValue", "10"}},
       json::object(),
       "",
       0,
       std::nullopt},
      {"a source type no API version has",
       "Magic",
       {{"type", "Value"}, {"value", "1"}},
       json::object(),
       "",
       0,
       std::nullopt},
      {"an int32 limit",
       "Resource",
       {{"type", "Utilization"}, {"averageUtilization", 2147483647}},
       json::object(),
       "Utilization",
       2147483647.0,
       std::nullopt},
  };
  const std::map<std::string, std::string> member{
      {"Pods", "pods"},         {"External", "external"},
      {"Resource", "resource"}, {"ContainerResource", "containerResource"},
      {"Object", "object"},     {"Magic", "magic"}};
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    const std::string field = member.at(row.type);
    json source{{"name", "cpu"},
                {"container", "app"},
                {"metric", {{"name", "m"}}},
                {"describedObject", {{"kind", "Service"}, {"name", "s"}}}};
    json current = source;
    source["target"] = row.target;
    current["current"] = row.current;
    const json hpa{{"kind", "HorizontalPodAutoscaler"},
                   {"metadata", {{"name", "h"}, {"namespace", "ns"}}},
                   {"spec",
                    {{"scaleTargetRef", {{"kind", "Deployment"}, {"name", "d"}}},
                     {"maxReplicas", 2147483647},
                     {"metrics", {{{"type", row.type}, {field, source}}}}}},
                   {"status", {{"currentMetrics", {{{"type", row.type}, {field, current}}}}}}};
    auto h = readHpa(hpa);
    ASSERT_TRUE(h.ok()) << h.status().toString();
    EXPECT_EQ(h->maxReplicas, 2147483647);
    ASSERT_EQ(h->metrics.size(), 1u);
    const HpaMetric& m = h->metrics.front();
    EXPECT_EQ(m.targetType, row.targetType);
    EXPECT_DOUBLE_EQ(m.target, row.value);
    EXPECT_EQ(m.current, row.now);
  }
}

TEST(KubeObjectsTest, EmptyOrPartialStatusAndAbsentFieldsRead) {
  auto h = readHpa({{"metadata", {{"name", "h"}}},
                    {"spec", {{"scaleTargetRef", {{"kind", "LeaderWorkerSet"}, {"name", "x"}}}}},
                    {"status", {{"currentMetrics", nullptr}}}});
  ASSERT_TRUE(h.ok()) << h.status().toString();
  EXPECT_EQ(h->targetKind, "LeaderWorkerSet");
  EXPECT_EQ(h->currentReplicas, 0);
  EXPECT_EQ(h->minReplicas, 1);
  EXPECT_TRUE(h->conditions.empty());
}

TEST(KubeObjectsTest, ConfigMapsAndLeases) {
  auto cm = readConfigMap({{"metadata", {{"name", "c"}, {"namespace", "gpu-operator"}}},
                           {"data", {{"config.yaml", "version: v1\n"}}}});
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ(cm->value("config.yaml"), "version: v1\n");
  EXPECT_EQ(cm->value("absent"), "");
  auto lease = readLease({{"metadata", {{"name", "l"}, {"resourceVersion", "7"}}},
                          {"spec",
                           {{"holderIdentity", "a"},
                            {"renewTime", "2026-11-22T01:00:00.000000Z"},
                            {"leaseTransitions", 3}}}});
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->holderIdentity, "a");
  EXPECT_EQ(lease->leaseDurationSeconds, std::nullopt);
  EXPECT_EQ(lease->leaseTransitions, 3);
  EXPECT_EQ(lease->meta.resourceVersion, "7");
}

TEST(KubeObjectsTest, ErrorsNameTheField) {
  struct Row {
    const char* what;
    core::Result<bool> read;
    const char* fragment;
  };
  auto ok = [](const auto& r) -> core::Result<bool> {
    if (!r) return r.status();
    return true;
  };
  const std::vector<Row> rows{
      {"labels not strings", ok(readMeta({{"metadata", {{"labels", {{"a", 1}}}}}})),
       "labels.a must be a string"},
      {"data not strings", ok(readConfigMap({{"data", {{"k", 1}}}})), "data.k must be a string"},
      {"maxReplicas beyond int32", ok(readHpa({{"spec", {{"maxReplicas", 2147483648LL}}}})),
       "maxReplicas must be an integer in"},
      {"replicas as text", ok(readWorkload({{"spec", {{"replicas", "3"}}}}, "Deployment")),
       "replicas must be an integer"},
      {"a GPU request beyond int64",
       ok(readPod(
           {{"spec",
             {{"containers",
               {{{"name", "c"},
                 {"resources", {{"limits", {{"nvidia.com/gpu", "9223372036854775807"}}}}}}}}}}})),
       "limits.nvidia.com/gpu must be at most 2^31"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    ASSERT_FALSE(row.read.ok());
    EXPECT_NE(row.read.status().message().find(row.fragment), std::string::npos)
        << row.read.status().message();
  }
}

}  // namespace kube_objects_test
}  // namespace gpuscale::partition
