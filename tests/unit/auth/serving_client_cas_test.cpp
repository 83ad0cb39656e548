#include "gpuscale/auth/serving_client_cas.h"

#include <gtest/gtest.h>

#include <prometheus/registry.h>

#include <fstream>

#include "fakes/fake_kube_client.h"
#include "fakes/test_pki.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"
#include "unit/auth/authentication_config_map.h"

namespace gpuscale::auth {
namespace serving_client_cas_test {

using testing::makeCa;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

struct UnionCase {
  const char* what;
  std::vector<std::string> pems;
  std::vector<std::string> more;
  std::vector<std::string> expected;
};

TEST(ServingClientCasTest, UnionKeepsOrderAndDropsExactDuplicates) {
  const std::vector<UnionCase> cases = {
      {"both empty", {}, {}, {}},
      {"flags only", {"A"}, {}, {"A"}},
      {"ConfigMap only", {}, {"B", "C"}, {"B", "C"}},
      {"flag file and ConfigMap give the same bundle", {"A", "B"}, {"B", "C"}, {"A", "B", "C"}},
      {"duplicates within `more`", {}, {"C", "C"}, {"C"}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(unionOfPemBundles(c.pems, c.more), c.expected) << c.what;
  }
}

// Serving files and flag CA files in a temp dir, as an operator (or cert-manager) would mount them.
class ServingFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    auto serving = apiserver::generateSelfSignedCertificate("localhost", {}, {"127.0.0.1"});
    ASSERT_TRUE(serving.ok());
    write(dir_.file("tls.crt"), serving->certificateChainPem);
    write(dir_.file("tls.key"), serving->privateKeyPem);
    options_.tlsCertFile = dir_.file("tls.crt");
    options_.tlsPrivateKeyFile = dir_.file("tls.key");
  }

  // Flags whose `flag` (the client or request-header CA file) names `name` in the temp dir, written
  // with `pem`; the listener reads the same file.
  AuthenticationFlags caFileFlags(std::string AuthenticationFlags::*flag, const std::string& name,
                                  const std::string& pem) {
    write(dir_.file(name), pem);
    AuthenticationFlags flags;
    flags.*flag = dir_.file(name);
    options_.clientCaFiles = {flags.*flag};
    return flags;
  }

  std::shared_ptr<AuthenticationConfigSource> sourceFor(const AuthenticationFlags& flags) {
    auto config = configFromFlags(flags);
    EXPECT_TRUE(config.ok()) << config.status().toString();
    return std::make_shared<AuthenticationConfigSource>(*config, flags);
  }

  testing::TempDir dir_;
  apiserver::ServerOptions options_;
};

const kube::ResourceRef kConfigMaps =
    kube::ResourceRef::collection("", "v1", "configmaps", kAuthenticationConfigMapNamespace);

TEST_F(ServingFiles, RotatedFlagCaFileReachesTheListenerAndTheAuthenticator) {
  const auto before = makeCa("front-proxy-before");
  const auto after = makeCa("front-proxy-after");
  const AuthenticationFlags flags = caFileFlags(&AuthenticationFlags::requestHeaderClientCaFile,
                                                "front-proxy-ca.crt", before.certificatePem);
  auto source = sourceFor(flags);
  const auto load = servingTlsLoader(options_, source);
  auto tls = load();
  ASSERT_TRUE(tls.ok()) << tls.status().toString();
  EXPECT_EQ(tls->clientCaPems, std::vector<std::string>{before.certificatePem});

  write(dir_.file("front-proxy-ca.crt"), after.certificatePem);
  tls = load();
  ASSERT_TRUE(tls.ok()) << tls.status().toString();
  EXPECT_EQ(tls->clientCaPems, std::vector<std::string>{after.certificatePem});
  EXPECT_EQ(source->current()->requestHeader.ca->pem(), after.certificatePem);
}

TEST_F(ServingFiles, BadPemOnRotationKeepsTheOldCasUntilFixed) {
  const auto good = makeCa("good");
  const auto next = makeCa("next");
  const AuthenticationFlags flags =
      caFileFlags(&AuthenticationFlags::clientCaFile, "client-ca.crt", good.certificatePem);
  auto source = sourceFor(flags);
  auto registry = std::make_shared<prometheus::Registry>();
  auto tls = servingTlsWithClientCas(options_, source, registry);
  ASSERT_TRUE(tls.ok()) << tls.status().toString();

  write(dir_.file("client-ca.crt"), "-----BEGIN CERTIFICATE-----\ntruncated");
  EXPECT_FALSE((*tls)->reload().ok());
  EXPECT_EQ((*tls)->generation(), 1u);
  EXPECT_EQ((*tls)->currentConfig().clientCaPems, std::vector<std::string>{good.certificatePem});
  EXPECT_EQ(source->current()->clientCa->pem(), good.certificatePem);
  EXPECT_FALSE(source->lastError().ok());

  write(dir_.file("client-ca.crt"), next.certificatePem);
  ASSERT_TRUE((*tls)->reload().ok());
  EXPECT_EQ((*tls)->generation(), 2u);
  EXPECT_EQ((*tls)->currentConfig().clientCaPems, std::vector<std::string>{next.certificatePem});
  EXPECT_EQ(source->current()->clientCa->pem(), next.certificatePem);
  EXPECT_TRUE(source->lastError().ok());
}

TEST_F(ServingFiles, ConfigMapCasAreRequestedAndFollowedWithoutFlags) {
  const auto clientCa = makeCa("cluster-ca");
  const auto frontProxy = makeCa("front-proxy-ca");
  const auto replacement = makeCa("front-proxy-ca-2");
  auto kube = std::make_shared<testing::FakeKubeClient>();
  ASSERT_TRUE(kube->create(kConfigMaps, authenticationConfigMap(clientCa.certificatePem,
                                                                frontProxy.certificatePem))
                  .ok());
  auto source = sourceFor({});
  ASSERT_TRUE(source->startWatching(kube, {}).ok());
  auto tls = servingTlsWithClientCas(options_, source, std::make_shared<prometheus::Registry>());
  ASSERT_TRUE(tls.ok()) << tls.status().toString();
  (*tls)->startPolling(std::chrono::hours(1));  // only the ConfigMap change may wake it
  EXPECT_EQ((*tls)->currentConfig().clientCaPems,
            (std::vector<std::string>{frontProxy.certificatePem, clientCa.certificatePem}));

  ASSERT_TRUE(
      kube->patch(kConfigMaps.named(kAuthenticationConfigMapName), kube::PatchType::kMerge,
                  {{"data", {{"requestheader-client-ca-file", replacement.certificatePem}}}})
          .ok());
  EXPECT_TRUE(
      testing::waitUntil([&] { return (*tls)->generation() == 2; }, std::chrono::seconds(30)));
  EXPECT_EQ((*tls)->currentConfig().clientCaPems,
            (std::vector<std::string>{replacement.certificatePem, clientCa.certificatePem}));

  // A broken ConfigMap: the authenticator and the listener keep what they had.
  ASSERT_TRUE(kube->patch(kConfigMaps.named(kAuthenticationConfigMapName), kube::PatchType::kMerge,
                          {{"data", {{"requestheader-client-ca-file", "garbage"}}}})
                  .ok());
  EXPECT_TRUE(
      testing::waitUntil([&] { return !source->lastError().ok(); }, std::chrono::seconds(30)));
  EXPECT_FALSE((*tls)->reload().ok());
  EXPECT_EQ((*tls)->generation(), 2u);
  EXPECT_EQ(source->current()->requestHeader.ca->pem(), replacement.certificatePem);
  (*tls)->stopPolling();
}

TEST_F(ServingFiles, FlagCasAndConfigMapCasAreUnited) {
  const auto flagCa = makeCa("flag-client-ca");
  const auto frontProxy = makeCa("front-proxy-ca");
  auto kube = std::make_shared<testing::FakeKubeClient>();
  ASSERT_TRUE(kube->create(kConfigMaps, authenticationConfigMap(makeCa("ignored").certificatePem,
                                                                frontProxy.certificatePem))
                  .ok());
  const AuthenticationFlags flags =
      caFileFlags(&AuthenticationFlags::clientCaFile, "client-ca.crt", flagCa.certificatePem);
  auto source = sourceFor(flags);
  ASSERT_TRUE(source->startWatching(kube, flags).ok());
  auto tls = servingTlsLoader(options_, source)();
  ASSERT_TRUE(tls.ok()) << tls.status().toString();
  // The flag wins for the client CA; the request-header CA comes from the ConfigMap.
  EXPECT_EQ(tls->clientCaPems,
            (std::vector<std::string>{flagCa.certificatePem, frontProxy.certificatePem}));
}

}  // namespace serving_client_cas_test
}  // namespace gpuscale::auth
