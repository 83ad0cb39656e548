#include "gpuscale/partition/policy.h"

#include <gtest/gtest.h>

#include "kube_objects.h"
#include "support/rejected_inputs.h"

namespace gpuscale::partition {
namespace policy_test {

using gpuscale::testing::expectAllRejected;
using gpuscale::testing::RejectedInput;

TEST(PolicyTest, ParsesEveryField) {
  auto set = parsePolicies(R"(policies:
- name: inference
  hpas: [default/triton]
  levers: [timeSlicing, migReshape]
  migProfiles: [1g.5gb, 2g.10gb]
  timeSlicing: {maxReplicas: 8, perPodGpuMemory: 4Gi, saturation: 0.7}
  nodeSelector: {pool: gpu}
  maxReplicas: {hard: 28}
  cooldown: {scaleUp: 1m, scaleDown: 1h30m}
  tolerance: 0.05
  migGiveBack: restore
  migModeChange: {enabled: true}
- name: batch
  hpaNamespaces: ["*"]
  maxReplicas: {factor: 2}
)");
  ASSERT_TRUE(set.ok()) << set.status().toString();
  ASSERT_EQ(set->policies.size(), 2u);
  const Policy& p = set->policies[0];
  EXPECT_EQ(p.levers, (std::vector<Lever>{Lever::kTimeSlicing, Lever::kMigReshape}));
  EXPECT_EQ(p.migProfiles, (std::set<std::string>{"1g.5gb", "2g.10gb"}));
  EXPECT_EQ(p.maxTimeSlicingReplicas, 8);
  EXPECT_DOUBLE_EQ(*p.perPodGpuMemoryBytes, 4.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(p.timeSlicingSaturation, 0.7);
  EXPECT_DOUBLE_EQ(set->policies[1].timeSlicingSaturation, 0.8) << "the default";
  EXPECT_EQ(p.scaleUpCooldown, std::chrono::seconds(60));
  EXPECT_EQ(p.scaleDownCooldown, std::chrono::seconds(5400));
  EXPECT_DOUBLE_EQ(p.tolerance, 0.05);
  EXPECT_TRUE(p.migRestore);
  EXPECT_FALSE(set->policies[1].migRestore) << "keep unless asked";
  EXPECT_TRUE(p.migModeChange.enabled);
  EXPECT_FALSE(set->policies[1].migModeChange.enabled) << "MIG mode never changes unless asked";
  EXPECT_EQ(p.hardMaxFor(7), 28);
  EXPECT_EQ(set->policies[1].hardMaxFor(7), 14);
  EXPECT_TRUE(p.selectsNode({{"pool", "gpu"}, {"zone", "a"}}));
  EXPECT_FALSE(p.selectsNode({{"pool", "cpu"}}));
}

TEST(PolicyTest, OldSpellingsAreAcceptedWithAWarning) {
  struct Row {
    const char* what;
    const char* yaml;
    bool enabled;
    const char* warning;  // "" = none
  };
  const Row rows[] = {
      {"current name", "name: a\nhpaNamespaces: [x]\nmigModeChange: {enabled: true}\n", true, ""},
      {"old name", "name: a\nhpaNamespaces: [x]\nmigModeChange: {enable: true}\n", true,
       "line 3, column 17: migModeChange.enable is deprecated, use migModeChange.enabled"},
      {"old name, false", "name: a\nhpaNamespaces: [x]\nmigModeChange:\n  enable: false\n", false,
       "line 4, column 3: migModeChange.enable is deprecated"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    auto set = parsePolicies(row.yaml);
    ASSERT_TRUE(set.ok()) << set.status().toString();
    EXPECT_EQ(set->policies.at(0).migModeChange.enabled, row.enabled);
    if (std::string(row.warning).empty()) {
      EXPECT_TRUE(set->warnings.empty());
    } else {
      ASSERT_EQ(set->warnings.size(), 1u);
      EXPECT_NE(set->warnings[0].find(row.warning), std::string::npos) << set->warnings[0];
    }
  }
}

// The reference is drawn from the parser's declarations: each row's key is listed with its type
// and the default of a default Policy, and the parser accepts the key.
TEST(PolicyTest, ReferenceListsTheParsersKeysWithTheirDefaults) {
  const std::string reference = policyReference("the command");
  struct Row {
    const char* line;  // the start of the key's table row
    const char* yaml;  // the key in a policy
  };
  const Row rows[] = {
      {"| `name` | string |", ""},
      {"| `levers` | string list | `[migReshape, timeSlicing]` |", "levers: [mps]\n"},
      {"| `timeSlicing.maxReplicas` | integer | `4` |", "timeSlicing: {maxReplicas: 2}\n"},
      {"| `timeSlicing.saturation` | number | `0.8` |", "timeSlicing: {saturation: 0.5}\n"},
      {"| `mps.changeBusyNodes` | boolean | `false` |", "mps: {changeBusyNodes: true}\n"},
      {"| `migModeChange.enabled` | boolean | `false` |", "migModeChange: {enabled: true}\n"},
      {"| `maxReplicas.factor` | number | `4` |", "maxReplicas: {factor: 2}\n"},
      {"| `cooldown.scaleDown` | duration | `10m0s` |", "cooldown: {scaleDown: 1m}\n"},
      {"| `migGiveBack` | keep or restore | `keep` |", "migGiveBack: restore\n"},
      {"| `anticipation.horizon` | duration | `2m0s` |", "anticipation: {horizon: 1m}\n"},
      {"| `anticipation.leadTime.migReshape` | duration | `1m0s` |",
       "anticipation: {leadTime: {migReshape: 2m}}\n"},
      {"| `tolerance` | number | `0.1` |", "tolerance: 0.2\n"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.line);
    EXPECT_NE(reference.find(std::string("\n") + row.line), std::string::npos) << reference;
    auto set = parsePolicies(std::string("name: a\nhpaNamespaces: [x]\n") + row.yaml);
    EXPECT_TRUE(set.ok()) << set.status().toString();
  }
  EXPECT_NE(reference.find("(deprecated name: `migModeChange.enable`)"), std::string::npos);
  EXPECT_NE(reference.find("`the command`"), std::string::npos);
}

TEST(PolicyTest, SinglePolicyFileAndDefaults) {
  const Policy p = testing::onePolicy("name: solo\nhpaNamespaces: [ml]\n");
  EXPECT_EQ(p.levers, (std::vector<Lever>{Lever::kMigReshape, Lever::kTimeSlicing}));
  EXPECT_EQ(p.maxTimeSlicingReplicas, 4);
  EXPECT_EQ(p.hardMaxFor(7), 28);
}

TEST(PolicyTest, MpsLeverAndItsLimits) {
  struct Case {
    const char* what;
    std::string yaml;
    std::vector<Lever> levers;
    MpsPolicy mps;
    std::optional<double> memory;  // mpsPerPodGpuMemoryBytes()
  };
  const double gib = 1073741824.0;
  const Case cases[] = {
      {"no mps block: defaults, not a lever",
       "name: a\nhpaNamespaces: [x]\n",
       {Lever::kMigReshape, Lever::kTimeSlicing},
       {4, std::nullopt, false},
       std::nullopt},
      {"MPS preferred over time-slicing",
       "name: a\nhpaNamespaces: [x]\nlevers: [mps, timeSlicing]\n"
       "mps: {maxReplicas: 48, perPodGpuMemory: 3Gi, changeBusyNodes: true}\n",
       {Lever::kMps, Lever::kTimeSlicing},
       {48, 3 * gib, true},
       3 * gib},
      {"the memory need falls back to time-slicing's",
       "name: a\nhpaNamespaces: [x]\nlevers: [mps]\ntimeSlicing: {perPodGpuMemory: 2Gi}\n",
       {Lever::kMps},
       {4, std::nullopt, false},
       2 * gib},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const Policy p = testing::onePolicy(c.yaml);
    EXPECT_EQ(p.levers, c.levers) << c.what;
    EXPECT_EQ(p.mps.maxReplicas, c.mps.maxReplicas) << c.what;
    EXPECT_EQ(p.mps.perPodGpuMemoryBytes, c.mps.perPodGpuMemoryBytes) << c.what;
    EXPECT_EQ(p.mps.changeBusyNodes, c.mps.changeBusyNodes) << c.what;
    EXPECT_EQ(p.mpsPerPodGpuMemoryBytes(), c.memory) << c.what;
  }
  EXPECT_EQ(leverName(Lever::kMps), "mps");
  EXPECT_EQ(Anticipation{}.leadTime.at(Lever::kMps), std::chrono::seconds(30));
}

TEST(PolicyTest, SharingAcrossNamespacesIsWrittenOutOnPurpose) {
  const auto sharing = [](const char* yaml) {
    return testing::onePolicy(std::string("name: a\nhpaNamespaces: [x]\n") + yaml)
        .shareAcrossNamespaces;
  };
  EXPECT_TRUE(sharing("").empty()) << "by default: one namespace";
  EXPECT_EQ(sharing("sharing: {acrossNamespaces: [x, y]}\n"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(sharing("sharing: {acrossNamespaces: [\"*\"]}\n"), std::vector<std::string>{"*"});
  EXPECT_TRUE(defaultPolicies().policies[0].shareAcrossNamespaces.empty());
}

TEST(PolicyTest, BuiltInDefaultMatchesTheIssue) {
  PolicySet set = defaultPolicies();
  ASSERT_EQ(set.policies.size(), 1u);
  const Policy& p = set.policies[0];
  EXPECT_EQ(p.name, "default");
  EXPECT_EQ(p.levers.front(), Lever::kMigReshape) << "MIG reshape of idle GPUs first";
  EXPECT_EQ(p.maxTimeSlicingReplicas, 4);
  EXPECT_EQ(p.hardMaxFor(7), 28) << "hard max = 4 x current partitions";
  EXPECT_TRUE(p.nodeSelector.empty());
  EXPECT_EQ(p.hpaNamespaces, std::vector<std::string>{"*"}) << "only for offline plans";
}

TEST(PolicyTest, ChoosesPolicyByAnnotationThenList) {
  auto set = parsePolicies(
      "policies:\n- name: a\n  hpas: [ns/listed]\n- name: b\n  hpaNamespaces: [ns]\n");
  ASSERT_TRUE(set.ok()) << set.status().toString();
  EXPECT_EQ(set->forHpa("ns", "x", {}, {{"gpuscale.io/partition-policy", "b"}})->name, "b");
  EXPECT_EQ(set->forHpa("ns", "listed", {}, {})->name, "a");
  EXPECT_EQ(set->forHpa("ns", "x", {}, {}), nullptr);
  EXPECT_EQ(set->forHpa("ns", "x", {}, {{"gpuscale.io/partition-policy", "zzz"}}), nullptr);
}

// Scope: which HPAs an annotation may attach to which policy. One row per case.
TEST(PolicyTest, AnnotationSelectsOnlyAmongPoliciesThatAdmitTheHpa) {
  const char* file = R"(policies:
- name: serving
  hpaNamespaces: [ml-serving, ml-canary]
- name: gold
  hpaNamespaces: [ml-serving]
  hpaSelector:
    matchLabels: {tier: gold}
    matchExpressions:
    - {key: team, operator: In, values: [search, ads]}
    - {key: frozen, operator: DoesNotExist}
- name: everywhere
  hpaNamespaces: ["*"]
  hpaSelector:
    matchExpressions:
    - {key: gpuscale-opt-in, operator: Exists}
- name: listed-only
  hpas: [team-a/triton]
)";
  auto set = parsePolicies(file);
  ASSERT_TRUE(set.ok()) << set.status().toString();
  using Labels = std::map<std::string, std::string>;
  struct Row {
    const char* what;
    const char* ns;
    const char* name;
    Labels labels;
    const char* annotation;  // nullptr: none
    const char* want;        // nullptr: not managed
    const char* ignoredWhy;  // "" when the annotation is honoured or absent
  };
  const Row rows[] = {
      {"namespace in scope", "ml-serving", "t", {}, "serving", "serving", ""},
      {"second namespace in scope", "ml-canary", "t", {}, "serving", "serving", ""},
      {"namespace out of scope",
       "tenant-x",
       "t",
       {},
       "serving",
       nullptr,
       "does not admit this HPA"},
      {"no annotation, namespace in scope: not managed",
       "ml-serving",
       "t",
       {},
       nullptr,
       nullptr,
       ""},
      {"selector matches",
       "ml-serving",
       "t",
       {{"tier", "gold"}, {"team", "ads"}},
       "gold",
       "gold",
       ""},
      {"selector: matchLabels differs",
       "ml-serving",
       "t",
       {{"tier", "silver"}, {"team", "ads"}},
       "gold",
       nullptr,
       "does not admit this HPA"},
      {"selector: In fails",
       "ml-serving",
       "t",
       {{"tier", "gold"}, {"team", "infra"}},
       "gold",
       nullptr,
       "does not admit this HPA"},
      {"selector: DoesNotExist fails",
       "ml-serving",
       "t",
       {{"tier", "gold"}, {"team", "ads"}, {"frozen", "yes"}},
       "gold",
       nullptr,
       "does not admit this HPA"},
      {"selector matches, wrong namespace",
       "ml-canary",
       "t",
       {{"tier", "gold"}, {"team", "ads"}},
       "gold",
       nullptr,
       "does not admit this HPA"},
      {"star with Exists selector",
       "anything",
       "t",
       {{"gpuscale-opt-in", ""}},
       "everywhere",
       "everywhere",
       ""},
      {"star, selector unmet",
       "anything",
       "t",
       {},
       "everywhere",
       nullptr,
       "does not admit this HPA"},
      {"listed HPA, no annotation", "team-a", "triton", {}, nullptr, "listed-only", ""},
      {"listed-only policy named by an unlisted HPA",
       "team-a",
       "other",
       {},
       "listed-only",
       nullptr,
       "does not admit this HPA"},
      {"undefined policy", "ml-serving", "t", {}, "nope", nullptr, "is not defined"},
      {"annotation ignored, listing still applies",
       "team-a",
       "triton",
       {},
       "serving",
       "listed-only",
       "does not admit this HPA"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    Labels annotations;
    if (row.annotation != nullptr) annotations["gpuscale.io/partition-policy"] = row.annotation;
    auto m = set->match(row.ns, row.name, row.labels, annotations);
    if (row.want == nullptr) {
      EXPECT_EQ(m.policy, nullptr) << m.policy->name;
    } else {
      ASSERT_NE(m.policy, nullptr);
      EXPECT_EQ(m.policy->name, row.want);
    }
    EXPECT_EQ(m.ignoredWhy, row.ignoredWhy);
    EXPECT_EQ(m.ignored, *row.ignoredWhy == '\0' ? "" : row.annotation);
  }
}

TEST(PolicyTest, APolicyWithoutScopeIsRejected) {
  const RejectedInput<> cases[] = {
      {"no scope at all", "name: a\n", "has no HPA scope"},
      {"no scope in a list", "policies:\n- name: a\n  hpaNamespaces: [x]\n- name: b\n",
       "policy \"b\" has no HPA scope"},
      {"selector without namespaces", "name: a\nhpas: [x/y]\nhpaSelector: {matchLabels: {a: b}}\n",
       "needs hpaNamespaces"},
      {"empty namespace list", "name: a\nhpaNamespaces: []\n", "must list namespaces"},
      {"star mixed with names", "name: a\nhpaNamespaces: [\"*\", ml]\n", "cannot be mixed"},
      {"bad namespace name", "name: a\nhpaNamespaces: [ML_Serving]\n", "not a namespace name"},
      {"sharing: star mixed with names",
       "name: a\nhpaNamespaces: [x]\nsharing: {acrossNamespaces: [\"*\", x]}\n",
       "sharing.acrossNamespaces: \"*\" (every namespace) cannot be mixed"},
      {"sharing: an empty list", "name: a\nhpaNamespaces: [x]\nsharing: {acrossNamespaces: []}\n",
       "sharing.acrossNamespaces must list namespaces"},
      {"sharing: an unknown field", "name: a\nhpaNamespaces: [x]\nsharing: {anyone: true}\n",
       "anyone"},
      {"bad selector operator",
       "name: a\nhpaNamespaces: [x]\nhpaSelector: {matchExpressions: [{key: a, operator: Gt}]}\n",
       "operator must be"},
      {"In without values",
       "name: a\nhpaNamespaces: [x]\nhpaSelector: {matchExpressions: [{key: a, operator: In}]}\n",
       "needs values"},
      {"bad label value", "name: a\nhpaNamespaces: [x]\nhpaSelector: {matchLabels: {a: \"b c\"}}\n",
       "hpaSelector"},
      {"unknown selector field", "name: a\nhpaNamespaces: [x]\nhpaSelector: {labels: {a: b}}\n",
       "unexpected field"},
  };
  expectAllRejected(cases, parsePolicies);
}

TEST(PolicyTest, RejectsBadPolicies) {
  const RejectedInput<> cases[] = {
      {"unknown field", "name: a\nlevers: [timeSlicing]\ncolour: red\n", "line 3, column 1"},
      {"unknown lever", "name: a\nlevers: [magic]\n", "migReshape, timeSlicing or mps"},
      {"one MPS replica", "name: a\nmps: {maxReplicas: 1}\n", "mps.maxReplicas must be in [2, 48]"},
      {"more MPS replicas than clients", "name: a\nmps: {maxReplicas: 49}\n", "at most 48 clients"},
      {"bad MPS memory", "name: a\nmps: {perPodGpuMemory: -1Gi}\n", "perPodGpuMemory"},
      {"unknown MPS field", "name: a\nmps: {replicas: 4}\n",
       "unexpected field \"replicas\" in mps"},
      {"unknown migModeChange field", "name: a\nmigModeChange: {on: true}\n",
       "unexpected field \"on\" in migModeChange"},
      {"migModeChange not a boolean", "name: a\nmigModeChange: {enable: sometimes}\n", "enable"},
      {"lever twice", "name: a\nlevers: [timeSlicing, timeSlicing]\n", "twice"},
      {"missing name", "levers: [timeSlicing]\n", "needs a name"},
      {"duplicate names",
       "policies:\n- name: a\n  hpaNamespaces: [x]\n- name: a\n  hpaNamespaces: [x]\n",
       "defined twice"},
      {"zero hard max", "name: a\nmaxReplicas: {hard: 0}\n", "at least 1"},
      {"bad memory", "name: a\ntimeSlicing: {perPodGpuMemory: lots}\n", "perPodGpuMemory"},
      {"zero saturation", "name: a\ntimeSlicing: {saturation: 0}\n", "saturation"},
      {"saturation above 1", "name: a\ntimeSlicing: {saturation: 80}\n", "saturation"},
      {"bad duration", "name: a\ncooldown: {scaleUp: soon}\n", "duration"},
      {"bad hpa reference", "name: a\nhpas: [triton]\n", "namespace/name"},
      {"tolerance out of range", "name: a\ntolerance: 2\n", "tolerance"},
      {"unknown give-back", "name: a\nmigGiveBack: always\n", "keep or restore"},
      {"excludeNodes not a list", "name: a\nexcludeNodes: {matchLabels: {a: b}}\n", "a list"},
      {"an empty exclusion", "name: a\nexcludeNodes: [{}]\n", "every node"},
      {"a bad exclusion", "name: a\nexcludeNodes: [{matchLabels: {a: \"b c\"}}]\n", "excludeNodes"},
      {"not a mapping", "- a\n", "mapping"},
      {"broken YAML", "name: [a\n", "line"},
  };
  expectAllRejected(cases, parsePolicies);
}

TEST(PolicyTest, ExcludedNodesAreNotSelected) {
  const Policy p = testing::onePolicy(
      "name: a\nhpaNamespaces: [x]\nnodeSelector: {pool: gpu}\nexcludeNodes:\n"
      "- matchExpressions: [{key: cloud.google.com/gke-gpu-partition-size, operator: Exists}]\n"
      "- matchLabels: {kubernetes.azure.com/agentpool: migfixed}\n");
  struct Row {
    const char* what;
    std::map<std::string, std::string> labels;
    bool selected;
  };
  const Row rows[] = {
      {"in the pool, no exclusion matches", {{"pool", "gpu"}}, true},
      {"outside the nodeSelector", {{"pool", "cpu"}}, false},
      {"a GKE pool with a fixed partition size",
       {{"pool", "gpu"}, {"cloud.google.com/gke-gpu-partition-size", "1g.5gb"}},
       false},
      {"an AKS pool excluded by name",
       {{"pool", "gpu"}, {"kubernetes.azure.com/agentpool", "migfixed"}},
       false},
      {"another AKS pool", {{"pool", "gpu"}, {"kubernetes.azure.com/agentpool", "flex"}}, true},
  };
  for (const auto& row : rows) EXPECT_EQ(p.selectsNode(row.labels), row.selected) << row.what;
}

TEST(PolicyTest, SeedPolicyFileParses) {
  EXPECT_EQ(testing::onePolicy(testing::readDataFile("t4-policy.yaml")).name, "t4-inference");
}

}  // namespace policy_test
}  // namespace gpuscale::partition
