#include "gpuscale/auth/delegation_options.h"

#include <gtest/gtest.h>

namespace gpuscale::auth {
namespace {

TEST(DelegationOptionsTest, DefaultsMatchKubernetes) {
  DelegationOptions options;
  EXPECT_EQ(options.clientQps, 5);
  EXPECT_EQ(options.clientBurst, 10);
  EXPECT_EQ(options.tokenCacheTtl, std::chrono::seconds(10));
  EXPECT_EQ(options.authorization.allowedTtl, std::chrono::seconds(10));
  EXPECT_EQ(options.authorization.deniedTtl, std::chrono::seconds(10));
  EXPECT_EQ(options.authorization.alwaysAllowPaths,
            (std::vector<std::string>{"/healthz", "/readyz", "/livez"}));
  EXPECT_EQ(options.authentication.requestHeaderUsernameHeaders,
            std::vector<std::string>{"X-Remote-User"});
}

TEST(DelegationOptionsTest, ParsesEveryFlagAndKeepsTheRest) {
  DelegationOptions options;
  auto rest = parseDelegationFlags({"--lister-kubeconfig=/k/lister",
                                    "--client-qps",
                                    "50",
                                    "--client-burst=100",
                                    "--authentication-kubeconfig",
                                    "/k/authn",
                                    "--authentication-token-webhook-cache-ttl=1m",
                                    "--client-ca-file=/pki/ca.crt",
                                    "--requestheader-client-ca-file",
                                    "/pki/fp.crt",
                                    "--requestheader-allowed-names=front-proxy-client, aggregator",
                                    "--requestheader-username-headers=X-User",
                                    "--requestheader-group-headers=X-G1,X-G2",
                                    "--requestheader-extra-headers-prefix=X-Extra-",
                                    "--authentication-skip-lookup",
                                    "--authentication-tolerate-lookup-failure=true",
                                    "--authorization-kubeconfig=/k/authz",
                                    "--authorization-webhook-cache-authorized-ttl=5s",
                                    "--authorization-webhook-cache-unauthorized-ttl=2s",
                                    "--authorization-always-allow-paths=/healthz,/metrics",
                                    "--secure-port=6443",
                                    "/adapter"},
                                   options);
  ASSERT_TRUE(rest.ok()) << rest.status().toString();
  EXPECT_EQ(*rest, (std::vector<std::string>{"--client-ca-file=/pki/ca.crt",
                                             "--requestheader-client-ca-file", "/pki/fp.crt",
                                             "--secure-port=6443", "/adapter"}));
  EXPECT_EQ(options.listerKubeconfig, "/k/lister");
  EXPECT_EQ(options.clientQps, 50);
  EXPECT_EQ(options.clientBurst, 100);
  EXPECT_EQ(options.authenticationKubeconfig, "/k/authn");
  EXPECT_EQ(options.tokenCacheTtl, std::chrono::minutes(1));
  EXPECT_EQ(options.authentication.clientCaFile, "/pki/ca.crt");
  EXPECT_EQ(options.authentication.requestHeaderClientCaFile, "/pki/fp.crt");
  EXPECT_EQ(options.authentication.requestHeaderAllowedNames,
            (std::vector<std::string>{"front-proxy-client", "aggregator"}));
  EXPECT_EQ(options.authentication.requestHeaderUsernameHeaders,
            std::vector<std::string>{"X-User"});
  EXPECT_EQ(options.authentication.requestHeaderGroupHeaders,
            (std::vector<std::string>{"X-G1", "X-G2"}));
  EXPECT_EQ(options.authentication.requestHeaderExtraHeaderPrefixes,
            std::vector<std::string>{"X-Extra-"});
  EXPECT_TRUE(options.skipLookup);
  EXPECT_TRUE(options.tolerateLookupFailure);
  EXPECT_EQ(options.authorizationKubeconfig, "/k/authz");
  EXPECT_EQ(options.authorization.allowedTtl, std::chrono::seconds(5));
  EXPECT_EQ(options.authorization.deniedTtl, std::chrono::seconds(2));
  EXPECT_EQ(options.authorization.alwaysAllowPaths,
            (std::vector<std::string>{"/healthz", "/metrics"}));
}

struct BadFlag {
  const char* what;
  std::vector<std::string> args;
};

class BadFlagTest : public ::testing::TestWithParam<BadFlag> {};

TEST_P(BadFlagTest, IsBadRequest) {
  DelegationOptions options;
  auto rest = parseDelegationFlags(GetParam().args, options);
  ASSERT_FALSE(rest.ok()) << GetParam().what;
  EXPECT_EQ(rest.status().httpCode(), 400);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadFlagTest,
    ::testing::Values(BadFlag{"qps not a number", {"--client-qps=fast"}},
                      BadFlag{"negative burst", {"--client-burst=-1"}},
                      BadFlag{"ttl not a duration",
                              {"--authentication-token-webhook-cache-ttl=10"}},
                      BadFlag{"boolean junk", {"--authentication-skip-lookup=maybe"}},
                      BadFlag{"missing value", {"--authorization-kubeconfig"}}));

TEST(DelegationOptionsTest, MissingCaFileIsAnError) {
  DelegationOptions options;
  options.authentication.clientCaFile = "/nonexistent/ca.crt";
  options.skipLookup = true;
  auto built = buildDelegatedAuth(options);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("client-ca-file"), std::string::npos);
}

}  // namespace
}  // namespace gpuscale::auth
