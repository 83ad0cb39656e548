#include "gpuscale/auth/authentication_config.h"

#include <gtest/gtest.h>

#include <thread>

#include "fakes/fake_kube_client.h"
#include "fakes/test_pki.h"
#include "unit/auth/authentication_config_map.h"

namespace gpuscale::auth {
namespace authentication_config_test {

using testing::FakeKubeClient;
using testing::makeCa;

TEST(AuthenticationConfigTest, ConfigMapFillsWhatFlagsLeaveUnset) {
  const auto ca1 = makeCa("ca1");
  const auto ca2 = makeCa("ca2");
  AuthenticationFlags flags;
  auto merged = mergeConfigMap(AuthenticationConfig{}, flags,
                               authenticationConfigMap(ca1.certificatePem, ca2.certificatePem,
                                                       R"(["front-proxy-client","other"])"));
  ASSERT_TRUE(merged.ok()) << merged.status().toString();
  ASSERT_TRUE(merged->clientCa);
  EXPECT_EQ(merged->clientCa->pem(), ca1.certificatePem);
  ASSERT_TRUE(merged->requestHeader.ca);
  EXPECT_EQ(merged->requestHeader.ca->pem(), ca2.certificatePem);
  EXPECT_EQ(merged->requestHeader.allowedNames,
            (std::vector<std::string>{"front-proxy-client", "other"}));
  EXPECT_EQ(clientCaPemsForTls(*merged),
            (std::vector<std::string>{ca2.certificatePem, ca1.certificatePem}));
}

TEST(AuthenticationConfigTest, FlagsWinOverConfigMap) {
  const auto flagCa = makeCa("flag");
  const auto mapCa = makeCa("map");
  AuthenticationConfig base;
  base.clientCa = *CaBundle::fromPem(flagCa.certificatePem);
  AuthenticationFlags flags;
  flags.clientCaFile = "/set/by/flag";
  auto merged = mergeConfigMap(base, flags,
                               authenticationConfigMap(mapCa.certificatePem, mapCa.certificatePem));
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->clientCa->pem(), flagCa.certificatePem);
  EXPECT_EQ(merged->requestHeader.ca->pem(), mapCa.certificatePem);
}

struct BadMap {
  const char* what;
  kube::Object configMap;
};

class BadConfigMapTest : public ::testing::TestWithParam<BadMap> {};

TEST_P(BadConfigMapTest, IsRejected) {
  EXPECT_FALSE(mergeConfigMap({}, {}, GetParam().configMap).ok()) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadConfigMapTest,
    ::testing::Values(BadMap{"client CA not PEM", authenticationConfigMap("garbage", "")},
                      BadMap{"allowed names not a JSON array",
                             authenticationConfigMap("", makeCa("x").certificatePem,
                                                     "front-proxy-client")},
                      BadMap{"allowed names hold a number",
                             authenticationConfigMap("", makeCa("y").certificatePem, "[1]")}));

TEST(AuthenticationConfigSourceTest, FollowsTheConfigMap) {
  const auto ca1 = makeCa("first");
  const auto ca2 = makeCa("second");
  auto kube = std::make_shared<FakeKubeClient>();
  const auto configMaps = kube::ResourceRef::collection("", "v1", "configmaps", "kube-system");
  ASSERT_TRUE(
      kube->create(configMaps, authenticationConfigMap(ca1.certificatePem, ca1.certificatePem))
          .ok());

  AuthenticationConfigSource source({});
  ASSERT_TRUE(source.startWatching(kube, {}).ok());
  EXPECT_EQ(source.current()->clientCa->pem(), ca1.certificatePem);

  // A broken update is ignored; a good one replaces the config.
  ASSERT_TRUE(kube->patch(configMaps.named(kAuthenticationConfigMapName), kube::PatchType::kMerge,
                          {{"data", {{"client-ca-file", "garbage"}}}})
                  .ok());
  ASSERT_TRUE(kube->patch(configMaps.named(kAuthenticationConfigMapName), kube::PatchType::kMerge,
                          {{"data", {{"client-ca-file", ca2.certificatePem}}}})
                  .ok());
  for (int i = 0; i < 500 && source.current()->clientCa->pem() != ca2.certificatePem; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(source.current()->clientCa->pem(), ca2.certificatePem);
}

TEST(AuthenticationConfigSourceTest, MissingConfigMapIsAnError) {
  auto kube = std::make_shared<FakeKubeClient>();
  AuthenticationConfigSource source({});
  const auto status = source.startWatching(kube, {});
  EXPECT_EQ(status.httpCode(), 404);
}

}  // namespace authentication_config_test
}  // namespace gpuscale::auth
