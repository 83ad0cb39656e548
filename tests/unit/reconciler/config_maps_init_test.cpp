// initConfigMaps (config_maps_init.h) on a fake cluster, one row per starting state: which
// ConfigMaps are created, from what, and which are left as they are; every row is run twice and
// the second run creates nothing.
#include "gpuscale/reconciler/config_maps_init.h"

#include <functional>

#include <gtest/gtest.h>

#include "fakes/fake_kube_client.h"
#include "gpuscale/partition/kube_objects.h"

namespace gpuscale::reconciler {
namespace config_maps_init_test {

using gpuscale::testing::FakeKubeClient;
using nlohmann::json;

constexpr const char* kNs = "gpu-operator";

std::string migFile(const std::map<std::string, bool>& configs) {
  std::string text = "version: v1\nmig-configs:\n";
  for (const auto& [name, enabled] : configs) {
    text += "  " + name +
            ":\n    - devices: all\n      mig-enabled: " + (enabled ? "true" : "false") + "\n";
  }
  return text;
}

struct Cluster {
  FakeKubeClient fake;
  kube::ResourceRef configMaps = kube::ResourceRef::collection("", "v1", "configmaps", kNs);

  void configMap(const std::string& name, json data) {
    json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", name}, {"namespace", kNs}}},
               {"data", std::move(data)}};
    ASSERT_TRUE(fake.create(configMaps, cm));
  }
  void clusterPolicy(const std::string& mig, const std::string& devicePlugin) {
    json spec = json::object();
    if (!mig.empty()) spec["migManager"]["config"]["name"] = mig;
    if (!devicePlugin.empty()) spec["devicePlugin"]["config"]["name"] = devicePlugin;
    json policy = {{"apiVersion", "nvidia.com/v1"},
                   {"kind", "ClusterPolicy"},
                   {"metadata", {{"name", "cluster-policy"}}},
                   {"spec", spec}};
    ASSERT_TRUE(
        fake.create(kube::ResourceRef::collection("nvidia.com", "v1", "clusterpolicies"), policy));
  }
  // The ConfigMap's data, null when absent.
  json data(const std::string& name) {
    auto cm = fake.get(configMaps.named(name));
    return cm ? cm->value("data", json::object()) : json();
  }
};

struct Row {
  std::string what;
  std::function<void(Cluster&)> given;
  ConfigMapInitOutcome mig;
  ConfigMapInitOutcome devicePlugin;
  json migConfigs;        // MIG config name -> mig-enabled, in gpuscale's ConfigMap afterwards
  json devicePluginData;  // gpuscale's device-plugin ConfigMap's data afterwards
  std::string inText;     // a piece of the first run's text
};

const json kStockDevicePlugin = {{"ts-2", "version: v1\nsharing: {}\n"}};

const std::vector<Row>& rows() {
  using O = ConfigMapInitOutcome;
  static const std::vector<Row> kRows = {
      {"no ClusterPolicy: the operator's stock configs and a default device-plugin config",
       [](Cluster& c) {
         c.configMap("default-mig-parted-config",
                     {{"config.yaml", migFile({{"all-disabled", false}, {"all-enabled", true}})}});
       },
       O::kCreated,
       O::kCreated,
       {{"all-disabled", false}, {"all-enabled", true}},
       {{"default", "version: v1\n"}},
       "2 configs from default-mig-parted-config"},
      {"the ClusterPolicy names custom ConfigMaps: theirs first, then the stock ones",
       [](Cluster& c) {
         c.configMap("default-mig-parted-config",
                     {{"config.yaml", migFile({{"all-disabled", false}, {"all-enabled", true}})}});
         c.configMap("custom-mig",
                     {{"config.yaml", migFile({{"custom", true}, {"all-enabled", false}})}});
         c.configMap("custom-dp", kStockDevicePlugin);
         c.clusterPolicy("custom-mig", "custom-dp");
       },
       O::kCreated,
       O::kCreated,
       {{"all-disabled", false}, {"all-enabled", false}, {"custom", true}},
       kStockDevicePlugin,
       "a copy of custom-dp"},
      {"the ClusterPolicy already names gpuscale's: from the stock ones",
       [](Cluster& c) {
         c.configMap("default-mig-parted-config",
                     {{"config.yaml", migFile({{"all-disabled", false}})}});
         c.clusterPolicy("gpuscale-mig-parted-config", "device-plugin-config");
       },
       O::kCreated,
       O::kCreated,
       {{"all-disabled", false}},
       {{"default", "version: v1\n"}},
       "1 configs from default-mig-parted-config"},
      {"an unreadable custom ConfigMap is skipped and said",
       [](Cluster& c) {
         c.configMap("default-mig-parted-config",
                     {{"config.yaml", migFile({{"all-disabled", false}})}});
         c.configMap("custom-mig", {{"config.yaml", "version: v2\n"}});
         c.clusterPolicy("custom-mig", "");
       },
       O::kCreated,
       O::kCreated,
       {{"all-disabled", false}},
       {{"default", "version: v1\n"}},
       "skipped custom-mig: config.yaml"},
      {"existing ConfigMaps are left as they are",
       [](Cluster& c) {
         c.configMap("default-mig-parted-config",
                     {{"config.yaml", migFile({{"all-disabled", false}})}});
         c.configMap("gpuscale-mig-parted-config", {{"config.yaml", migFile({{"ours", true}})}});
         c.configMap("device-plugin-config", kStockDevicePlugin);
       },
       O::kExists,
       O::kExists,
       {{"ours", true}},
       kStockDevicePlugin,
       "nothing to do"},
      {"no mig-parted config to start from: nothing created for MIG, and why",
       [](Cluster&) {},
       O::kFailed,
       O::kCreated,
       json(),
       {{"default", "version: v1\n"}},
       "default-mig-parted-config: absent"},
  };
  return kRows;
}

json migConfigsOf(const json& data) {
  if (data.is_null()) return json();
  auto parsed = partition::parseMigPartedConfig(data.value("config.yaml", ""));
  EXPECT_TRUE(parsed) << parsed.status().message();
  json out = json::object();
  if (parsed) {
    for (const auto& [name, entries] : parsed->configs) out[name] = entries.at(0).migEnabled;
  }
  return out;
}

TEST(ConfigMapsInit, Rows) {
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.what);
    Cluster c;
    row.given(c);
    const ConfigMapsInitReport first = initConfigMaps(c.fake, {});
    ASSERT_EQ(first.configMaps.size(), 2u);
    EXPECT_EQ(first.configMaps[0].name, "gpu-operator/gpuscale-mig-parted-config");
    EXPECT_EQ(first.configMaps[0].outcome, row.mig);
    EXPECT_EQ(first.configMaps[1].name, "gpu-operator/device-plugin-config");
    EXPECT_EQ(first.configMaps[1].outcome, row.devicePlugin);
    const std::string text = configMapsInitText(first);
    EXPECT_NE(text.find(row.inText), std::string::npos) << text;
    EXPECT_EQ(migConfigsOf(c.data("gpuscale-mig-parted-config")), row.migConfigs);
    EXPECT_EQ(c.data("device-plugin-config"), row.devicePluginData);

    const int writes = c.fake.calls("create");
    const ConfigMapsInitReport second = initConfigMaps(c.fake, {});
    EXPECT_FALSE(second.changed());
    EXPECT_EQ(c.fake.calls("create"), writes);
    EXPECT_EQ(migConfigsOf(c.data("gpuscale-mig-parted-config")), row.migConfigs);
    if (second.ok()) {
      EXPECT_NE(configMapsInitText(second).find("nothing to do"), std::string::npos);
    }
  }
}

TEST(ConfigMapsInit, ReadErrorsAndRacesAreNotCreates) {
  {
    Cluster c;  // gpuscale's ConfigMap cannot be read: not overwritten blindly
    c.fake.failNext("get", core::Status::forbidden("configmaps"));
    const auto report = initConfigMaps(c.fake, {});
    EXPECT_EQ(report.configMaps[0].outcome, ConfigMapInitOutcome::kFailed);
    EXPECT_FALSE(report.ok());
  }
  {
    Cluster c;  // another writer created it between the read and the create
    c.configMap("default-mig-parted-config", {{"config.yaml", migFile({{"all-disabled", false}})}});
    c.configMap("device-plugin-config", kStockDevicePlugin);
    c.fake.failNext("create", core::Status(409, "AlreadyExists", "already exists"));
    const auto report = initConfigMaps(c.fake, {});
    EXPECT_EQ(report.configMaps[0].outcome, ConfigMapInitOutcome::kExists);
    EXPECT_TRUE(report.ok());
  }
}

}  // namespace config_maps_init_test
}  // namespace gpuscale::reconciler
