#include "gpuscale/partition/device_plugin_config.h"

#include <gtest/gtest.h>

#include "support/rejected_inputs.h"

namespace gpuscale::partition {
namespace device_plugin_config_test {

using gpuscale::testing::expectAllRejected;
using gpuscale::testing::RejectedInput;

constexpr const char* kMixedTimeSlicing = R"(version: v1
flags:
  migStrategy: mixed
  failOnInitError: true
  plugin:
    deviceListStrategy: [envvar, cdi-annotations]
sharing:
  timeSlicing:
    renameByDefault: false
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/mig-1g.10gb
      replicas: 2
    - name: nvidia.com/mig-3g.40gb
      replicas: 3
imex: {channelIDs: [], required: false}
)";

TEST(DevicePluginConfigTest, ParsesSharingAndKeepsOtherFields) {
  auto c = parseDevicePluginConfig(kMixedTimeSlicing);
  ASSERT_TRUE(c.ok()) << c.status().toString();
  EXPECT_EQ(c->migStrategy, MigStrategy::kMixed);
  ASSERT_TRUE(c->timeSlicing.has_value());
  EXPECT_EQ(c->timeSlicing->replicasFor("nvidia.com/mig-1g.10gb"), 2);
  EXPECT_EQ(c->timeSlicing->replicasFor("nvidia.com/mig-3g.40gb"), 3);
  EXPECT_EQ(c->timeSlicing->replicasFor("nvidia.com/gpu"), 1);
  EXPECT_EQ(c->timeSlicing->failRequestsGreaterThanOne, true);
  EXPECT_EQ(c->otherFlags.size(), 2u);
  EXPECT_EQ(c->otherFields.size(), 1u);
  EXPECT_FALSE(c->mps.has_value());
}

TEST(DevicePluginConfigTest, EmitParseRoundTrip) {
  auto c = parseDevicePluginConfig(kMixedTimeSlicing);
  ASSERT_TRUE(c.ok());
  auto again = parseDevicePluginConfig(emitDevicePluginConfig(*c));
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ(*again, *c);

  DevicePluginConfig mps;
  mps.mps = SharingConfig{false, std::nullopt, {{"nvidia.com/gpu", 10}}};
  auto mpsAgain = parseDevicePluginConfig(emitDevicePluginConfig(mps));
  ASSERT_TRUE(mpsAgain.ok()) << mpsAgain.status().toString();
  EXPECT_EQ(*mpsAgain, mps);
}

TEST(DevicePluginConfigTest, SetsReplicasPerResource) {
  auto c = parseDevicePluginConfig(kMixedTimeSlicing);
  ASSERT_TRUE(c.ok());
  auto raised = withTimeSlicingReplicas(*c, "nvidia.com/mig-1g.10gb", 4);
  EXPECT_EQ(raised.timeSlicing->replicasFor("nvidia.com/mig-1g.10gb"), 4);
  EXPECT_EQ(raised.timeSlicing->replicasFor("nvidia.com/mig-3g.40gb"), 3);
  EXPECT_EQ(raised.otherFlags, c->otherFlags);
  auto added = withTimeSlicingReplicas(raised, "nvidia.com/mig-2g.20gb", 2);
  EXPECT_EQ(added.timeSlicing->resources.size(), 3u);
  auto removed = withTimeSlicingReplicas(
      withTimeSlicingReplicas(added, "nvidia.com/mig-2g.20gb", 1), "nvidia.com/mig-3g.40gb", 1);
  EXPECT_EQ(removed.timeSlicing->resources.size(), 1u);
  auto none = withTimeSlicingReplicas(removed, "nvidia.com/mig-1g.10gb", 1);
  EXPECT_FALSE(none.timeSlicing.has_value())
      << "no shared resource left means no timeSlicing block";
  auto fresh = withTimeSlicingReplicas(DevicePluginConfig{}, "nvidia.com/gpu", 14);
  auto parsed = parseDevicePluginConfig(emitDevicePluginConfig(fresh));
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  EXPECT_EQ(parsed->timeSlicing->replicasFor("nvidia.com/gpu"), 14);
}

TEST(DevicePluginConfigTest, SetsMpsReplicasAndKeepsTheRest) {
  DevicePluginConfig c;
  c.otherFlags.emplace_back("plugin", "{deviceListStrategy: cdi-cri}");
  auto mps = withSharingReplicas(c, SharingMode::kMps, "nvidia.com/gpu", 4);
  ASSERT_TRUE(mps.mps.has_value());
  EXPECT_FALSE(mps.timeSlicing.has_value());
  EXPECT_EQ(sharingOf(mps, SharingMode::kMps)->replicasFor("nvidia.com/gpu"), 4);
  EXPECT_EQ(sharingOf(mps, SharingMode::kTimeSlicing), nullptr);
  auto parsed = parseDevicePluginConfig(emitDevicePluginConfig(mps));
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  EXPECT_EQ(*parsed, mps);
  mps.mps->renameByDefault = true;
  auto lowered = withSharingReplicas(mps, SharingMode::kMps, "nvidia.com/gpu", 2);
  EXPECT_EQ(lowered.mps->replicasFor("nvidia.com/gpu"), 2);
  EXPECT_TRUE(lowered.mps->renameByDefault) << "the operator's settings stay";
  auto off = withSharingReplicas(lowered, SharingMode::kMps, "nvidia.com/gpu", 1);
  EXPECT_FALSE(off.mps.has_value()) << "one replica is no mps block (the plugin rejects 1)";
  EXPECT_EQ(off.otherFlags, c.otherFlags);
  EXPECT_EQ(sharingModeName(SharingMode::kMps), "mps");
  EXPECT_EQ(sharingModeName(SharingMode::kTimeSlicing), "timeSlicing");
}

// The replicas a node's device plugin advertises per GPU: from whichever sharing block the file
// sets, 1 where nothing is shared.
TEST(DevicePluginConfigTest, SharedReplicasComeFromTheBlockInForce) {
  DevicePluginConfig timeSliced;
  timeSliced.timeSlicing = SharingConfig{false, std::nullopt, {{"nvidia.com/gpu", 4}}};
  DevicePluginConfig mps;
  mps.mps = SharingConfig{false, std::nullopt, {{"nvidia.com/mig-1g.10gb", 3}}};
  const DevicePluginConfig unshared;
  struct Row {
    const char* name;
    const DevicePluginConfig* config;
    const char* resource;
    int replicas;
    bool sharing;
  };
  const Row rows[] = {
      {"no config", nullptr, "nvidia.com/gpu", 1, false},
      {"no sharing block", &unshared, "nvidia.com/gpu", 1, false},
      {"time-slicing, listed", &timeSliced, "nvidia.com/gpu", 4, true},
      {"time-slicing, not listed", &timeSliced, "nvidia.com/mig-1g.10gb", 1, true},
      {"mps, listed", &mps, "nvidia.com/mig-1g.10gb", 3, true},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(sharedReplicas(row.config, row.resource), row.replicas) << row.name;
    EXPECT_EQ(activeSharing(row.config) != nullptr, row.sharing) << row.name;
  }
  EXPECT_EQ(activeSharing(&mps), &*mps.mps);
}

TEST(DevicePluginConfigTest, RejectsMalformedFiles) {
  const RejectedInput<> cases[] = {
      {"missing version", "flags: {migStrategy: none}\n", "version"},
      {"wrong version", "version: v2\n", "version must be v1"},
      {"unknown strategy", "version: v1\nflags: {migStrategy: half}\n", "migStrategy"},
      {"zero replicas",
       "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - {name: nvidia.com/gpu, "
       "replicas: 0}\n",
       "at least 1"},
      {"empty resources", "version: v1\nsharing:\n  timeSlicing:\n    resources: []\n", "required"},
      {"resource listed twice",
       "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - {name: nvidia.com/gpu, "
       "replicas: 2}\n"
       "    - {name: nvidia.com/gpu, replicas: 3}\n",
       "twice"},
      {"both sharing modes",
       "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: "
       "2}]\n"
       "  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n",
       "mutually exclusive"},
      {"replicas not a number",
       "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: "
       "many}]\n",
       "line 4"},
      {"a field the emitter cannot reproduce", "version: v1\n: \r", "rewritten unchanged"},
  };
  expectAllRejected(cases, parseDevicePluginConfig);
}

}  // namespace device_plugin_config_test
}  // namespace gpuscale::partition
