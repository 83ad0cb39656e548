#include "gpuscale/reconciler/hpa_explain.h"

#include <gtest/gtest.h>

#include <functional>

#include "gpuscale/core/rfc3339.h"
#include "gpuscale/reconciler/hpa_state_store.h"
#include "unit/partition/dra_objects.h"
#include "unit/partition/kube_objects.h"

namespace gpuscale::reconciler {
namespace hpa_explain_test {

namespace pt = gpuscale::partition::testing;
using nlohmann::json;

const partition::TimePoint kNow = *core::parseRfc3339("2026-11-22T01:00:00Z");
const std::string k1g = "nvidia.com/mig-1g.5gb";
const std::string kA100 = "NVIDIA-A100-SXM4-40GB";
const std::string kState = StateStoreOptions{}.name;

// A busy A100 (7 x 1g.5gb, all used by app), an idle one, and app's HPA blocked with one more pod
// pending; `edit` changes the objects, `record` is the state store's entry for default/app.
json cluster(const std::function<void(std::vector<json>&)>& edit,
             const std::optional<HpaRecord>& record = std::nullopt) {
  std::vector<json> items{pt::migNode("a100-busy", kA100, 1, "all-1g.5gb", {{"1g.5gb", 7}}),
                          pt::migNode("a100-idle", kA100, 1, "all-3g.20gb", {{"3g.20gb", 2}})};
  pt::append(items, pt::blockedApp("app", k1g, "a100-busy", 7, 1));
  for (auto& item : items) {
    if (item["kind"] == "HorizontalPodAutoscaler") item["metadata"]["uid"] = "uid-app";
  }
  if (record) {
    items.push_back(pt::configMap("default", kState,
                                  {{hpaRecordKey("default", "app"), encodeHpaRecord(*record)}}));
  }
  if (edit) edit(items);
  return pt::migCluster(items);
}

json& find(std::vector<json>& items, const std::string& kind, const std::string& name) {
  for (auto& item : items) {
    if (item["kind"] == kind && item["metadata"]["name"] == name) return item;
  }
  ADD_FAILURE() << kind << " " << name << " not found";
  return items.front();
}

std::vector<std::string> codes(const partition::HpaWhy& why) { return pt::whyCodes(why); }

TEST(HpaExplainTest, ExplainsFromTheStateAPassPlansFrom) {
  const std::string later = core::formatRfc3339(kNow + std::chrono::minutes(5));
  HpaRecord inFlight{"uid-app", std::nullopt, 8,
                     HpaIntent{"plan-1", 8, 15, {"a100-idle"}, kNow - std::chrono::seconds(30)}};
  HpaRecord recent{"uid-app", kNow - std::chrono::seconds(10), 8, std::nullopt};
  HpaRecord otherUid{"uid-old", kNow - std::chrono::seconds(10), 8, std::nullopt};
  struct Row {
    const char* what;
    json dump;
    std::string policy;              // YAML; "" = the built-in default
    std::string outside;             // prefix of HpaExplanation::outside; "" = planned
    std::vector<std::string> codes;  // when planned
  };
  const std::string base = "name: default\nhpaNamespaces: [default]\n";
  const std::vector<Row> rows{
      {"planned: the idle node is reshaped",
       cluster(nullptr),
       "",
       "",
       {"a100-busy/GpusBusy", "a100-idle/Reshaped", "Raised"}},
      {"no policy annotation: not managed",
       cluster([](auto& items) {
         find(items, "HorizontalPodAutoscaler", "app")["metadata"].erase("annotations");
       }),
       "",
       "NotManaged: no policy manages it",
       {}},
      {"an annotation naming an unknown policy",
       cluster([](auto& items) {
         find(items, "HorizontalPodAutoscaler",
              "app")["metadata"]["annotations"]["gpuscale.io/partition-policy"] = "gold";
       }),
       "",
       "NotManaged: its annotation gpuscale.io/partition-policy=gold is ignored",
       {}},
      {"the scale target is missing",
       cluster([](auto& items) {
         std::erase_if(items, [](const json& i) { return i["kind"] == "Deployment"; });
       }),
       "",
       "TargetNotFound",
       {}},
      {"an earlier raise is in flight (state store intent)",
       cluster(nullptr, inFlight),
       "",
       "RaiseInFlight: an earlier raise of maxReplicas 8 -> 15",
       {}},
      {"the state store's last change holds the cooldown",
       cluster(nullptr, recent),
       base + "cooldown: {scaleUp: 1m}\n",
       "",
       {"ScaleUpCooldown"}},
      {"a record of another HPA of the same name is not used",
       cluster(nullptr, otherUid),
       base + "cooldown: {scaleUp: 1m}\n",
       "",
       {"a100-busy/GpusBusy", "a100-idle/Reshaped", "Raised"}},
      {"the idle node backs off after a failure",
       cluster([&](auto& items) {
         find(items, "Node", "a100-idle")["metadata"]["annotations"]["gpuscale.io/backoff-until"] =
             later;
       }),
       base + "levers: [migReshape]\n",
       "",
       {"a100-busy/GpusBusy", "a100-idle/NodeBackoff", "Shortfall"}},
      {"an operation runs on the idle node",
       cluster([](auto& items) {
         find(items, "Node", "a100-idle")["metadata"]["annotations"]["gpuscale.io/intent"] = "{}";
       }),
       base + "levers: [migReshape]\n",
       "",
       {"a100-busy/GpusBusy", "a100-idle/NodeOperationInFlight", "Shortfall"}},
  };
  for (const auto& row : rows) {
    partition::PolicySet policies = partition::defaultPolicies();
    if (!row.policy.empty()) {
      auto parsed = partition::parsePolicies(row.policy);
      ASSERT_TRUE(parsed.ok()) << row.what;
      policies = *parsed;
    }
    auto explained = explainHpas(row.dump, kState, policies, {"default", "app", kNow, nullptr});
    ASSERT_TRUE(explained.ok()) << row.what << ": " << explained.status().toString();
    ASSERT_EQ(explained->hpas.size(), 1u) << row.what;
    const HpaExplanation& e = explained->hpas.front();
    EXPECT_TRUE(e.outside.starts_with(row.outside)) << row.what << ": " << e.outside;
    if (row.outside.empty()) {
      ASSERT_TRUE(e.why.has_value()) << row.what;
      EXPECT_EQ(codes(*e.why), row.codes) << row.what << "\n" << explanationsText(*explained);
    } else {
      EXPECT_FALSE(e.why.has_value()) << row.what;
    }
  }
}

TEST(HpaExplainTest, ARaiseInFlightShowsWhatContentionMadeOfItsPromise) {
  // app's raise 8 -> 15 waits for the reshape of a100-idle (7 slices expected); gold, of higher
  // priority, is blocked meanwhile with 3 Pending pods wanting 6.
  HpaRecord inFlight{"uid-app", std::nullopt, 8,
                     HpaIntent{"plan-1", 8, 15, {"a100-idle"}, kNow - std::chrono::seconds(5)}};
  const json dump = cluster(
      [](auto& items) {
        find(items, "Node", "a100-idle")["metadata"]["annotations"]["gpuscale.io/intent"] =
            json{{"plan", "plan-1"}, {"kind", "mig"}, {"expect", {{k1g, 7}}}}.dump();
        pt::append(items, pt::blockedApp("gold", k1g, "", 0, 3, "gold"));
      },
      inFlight);
  auto policies = partition::parsePolicies(
      "policies:\n"
      "- {name: default, hpaNamespaces: [default], levers: [migReshape], priority: 0}\n"
      "- {name: gold, hpas: [default/gold], levers: [migReshape], priority: 1000}\n");
  ASSERT_TRUE(policies.ok()) << policies.status().toString();
  auto explained = explainHpas(dump, kState, *policies, {"default", "app", kNow, nullptr});
  ASSERT_TRUE(explained.ok()) << explained.status().toString();
  ASSERT_EQ(explained->hpas.size(), 1u);
  const std::string& outside = explained->hpas.front().outside;
  EXPECT_TRUE(outside.starts_with("RaiseInFlight: an earlier raise of maxReplicas 8 -> 15"))
      << outside;
  EXPECT_NE(outside.find("; shared: priority 0:"), std::string::npos) << outside;
  EXPECT_NE(outside.find("the promise of maxReplicas 15 is cut to"), std::string::npos) << outside;
}

TEST(HpaExplainTest, OutputNamesTheVerdictAndThePlanActions) {
  auto explained = explainHpas(cluster(nullptr), kState, partition::defaultPolicies(),
                               {"default", "app", kNow, nullptr});
  ASSERT_TRUE(explained.ok());
  const json j = json::parse(explanationsJson(*explained).dump());
  ASSERT_EQ(j["hpas"].size(), 1u);
  EXPECT_EQ(j["hpas"][0]["verdict"], "raised maxReplicas 8 -> 14");
  ASSERT_EQ(j["hpas"][0]["actions"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["hpas"][0]["actions"][0]["kind"], "MigReconfigure");
  EXPECT_EQ(j["hpas"][0]["actions"][0]["node"], "a100-idle");
  EXPECT_EQ(j["hpas"][0]["actions"][1]["kind"], "SetMaxReplicas");
  const std::string text = explanationsText(*explained);
  EXPECT_NE(text.find("HPA default/app (policy default): raised maxReplicas 8 -> 14"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  plan: reshape MIG on node a100-idle"), std::string::npos) << text;
}

TEST(HpaExplainTest, AllManagedHpasOrOneThatExists) {
  auto all = explainHpas(cluster([](auto& items) {
                           items.push_back(pt::hpa("default", "unmanaged", [] {
                             pt::HpaSpec s;
                             s.policy = "";
                             return s;
                           }()));
                         }),
                         kState, partition::defaultPolicies(), {"", "", kNow, nullptr});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->hpas.size(), 1u) << "only the managed HPA";
  EXPECT_EQ(all->hpas.front().name, "app");
  auto missing = explainHpas(cluster(nullptr), kState, partition::defaultPolicies(),
                             {"default", "nope", kNow, nullptr});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().httpCode(), 404);
}

TEST(HpaExplainTest, ObjectsThatDoNotReadAreNamed) {
  const json dump = cluster([](auto& items) {
    items.push_back({{"kind", "HorizontalPodAutoscaler"},
                     {"metadata", {{"name", "bad"}, {"namespace", "default"}}},
                     {"spec", {{"maxReplicas", "7"}}}});
  });
  auto named =
      explainHpas(dump, kState, partition::defaultPolicies(), {"default", "bad", kNow, nullptr});
  ASSERT_TRUE(named.ok()) << named.status().toString();
  ASSERT_EQ(named->hpas.size(), 1u);
  EXPECT_TRUE(named->hpas.front().outside.starts_with("NotRead: maxReplicas must be an integer"))
      << named->hpas.front().outside;
  auto all = explainHpas(dump, kState, partition::defaultPolicies(), {"", "", kNow, nullptr});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->hpas.size(), 1u) << "the managed HPA is explained as before";
  EXPECT_NE(explanationsText(*all).find("HorizontalPodAutoscaler default/bad: maxReplicas must be "
                                        "an integer (malformed)"),
            std::string::npos)
      << explanationsText(*all);
  const json j = json::parse(explanationsJson(*all).dump());
  ASSERT_EQ(j["skipped"].size(), 1u);
  EXPECT_EQ(j["skipped"][0]["name"], "bad");
  EXPECT_EQ(j["skipped"][0]["reason"], "malformed");
}

// A mixed cluster in one pass: each GPU node's model is named, and each HPA is planned on the
// nodes of its pods' model.
TEST(HpaExplainTest, NamesTheModelEachNodeFollows) {
  auto explained = explainHpas(pt::draMixedCluster(), kState, partition::defaultPolicies(),
                               {"", "", kNow, nullptr});
  ASSERT_TRUE(explained.ok()) << explained.status().toString();
  EXPECT_TRUE(explained->skipped.empty());
  ASSERT_EQ(explained->hpas.size(), 2u);
  for (const auto& e : explained->hpas) {
    EXPECT_EQ(e.outside, "") << e.name;
    EXPECT_TRUE(e.why.has_value()) << e.name;
  }
  const std::string text = explanationsText(*explained);
  for (const char* line : {"  dp-a100: device plugin\n", "  dra-idle: DRA static, pool dra-idle",
                           "  dra-part: DRA partitionable, pool dra-part",
                           "  dra-static: DRA static, pool dra-static"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  const json j = json::parse(explanationsJson(*explained).dump());
  ASSERT_EQ(j["nodes"].size(), 4u) << j.dump(2);
  EXPECT_EQ(j["nodes"][2]["name"], "dra-part");
  EXPECT_EQ(j["nodes"][2]["model"], "DRA partitionable");

  // Claims the planner cannot count: said before the planner, with the reason.
  json dump = pt::draMixedCluster();
  for (auto& item : dump["items"]) {
    if (item["kind"] == "DeviceClass" && item["metadata"]["name"] == "mig.nvidia.com") {
      item["spec"]["selectors"][0]["cel"]["expression"] = "cel.bind(t, 'mig', true)";
    }
  }
  auto unsupported = explainHpas(dump, kState, partition::defaultPolicies(),
                                 {"default", "claims-app", kNow, nullptr});
  ASSERT_TRUE(unsupported.ok()) << unsupported.status().toString();
  ASSERT_EQ(unsupported->hpas.size(), 1u);
  EXPECT_TRUE(
      unsupported->hpas[0].outside.starts_with("ClaimsNotCounted: the pods of Deployment "
                                               "claims-app claim devices through DRA"))
      << unsupported->hpas[0].outside;
  EXPECT_NE(unsupported->hpas[0].outside.find("cel.bind() is not in the subset"), std::string::npos)
      << unsupported->hpas[0].outside;
}

}  // namespace hpa_explain_test
}  // namespace gpuscale::reconciler
