#include "gpuscale/auth/delegation_options.h"

#include <gtest/gtest.h>

#include <set>

namespace gpuscale::auth {
namespace delegation_options_test {

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

core::Result<std::vector<std::string>> parse(DelegationOptions& options,
                                             const std::vector<std::string>& args) {
  core::FlagSet flags("test");
  options.addFlags(flags);
  return flags.parse(args);
}

TEST(DelegationOptionsTest, ParsesEveryFlag) {
  DelegationOptions options;
  auto rest = parse(options, {"--lister-kubeconfig=/k/lister",
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
                              "/adapter"});
  ASSERT_TRUE(rest.ok()) << rest.status().toString();
  EXPECT_EQ(*rest, std::vector<std::string>{"/adapter"});
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
  auto rest = parse(options, GetParam().args);
  ASSERT_FALSE(rest.ok()) << GetParam().what;
  EXPECT_EQ(rest.status().httpCode(), 400);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadFlagTest,
    ::testing::Values(
        BadFlag{"qps not a number", {"--client-qps=fast"}},
        BadFlag{"negative burst", {"--client-burst=-1"}},
        BadFlag{"ttl not a duration", {"--authentication-token-webhook-cache-ttl=10"}},
        BadFlag{"boolean junk", {"--authentication-skip-lookup=maybe"}},
        BadFlag{"missing value", {"--authorization-kubeconfig"}},
        BadFlag{"burst not an integer", {"--client-burst=1.5"}},
        BadFlag{"negative TTL", {"--authorization-webhook-cache-authorized-ttl=-1s"}}));

TEST(DelegationOptionsTest, ReviewFlagsLeaveTheListersOut) {
  DelegationOptions options;
  core::FlagSet flags("status");
  options.addReviewFlags(flags);
  std::set<std::string> names;
  for (const core::FlagInfo& flag : flags.flags()) names.insert(flag.name);
  for (const char* name :
       {"authentication-kubeconfig", "authorization-webhook-cache-authorized-ttl", "client-ca-file",
        "requestheader-client-ca-file"}) {
    EXPECT_TRUE(names.contains(name)) << name;
  }
  for (const char* name : {"lister-kubeconfig", "client-qps", "client-burst"}) {
    EXPECT_FALSE(names.contains(name)) << name;
  }
}

TEST(DelegationOptionsTest, MissingCaFileIsAnError) {
  DelegationOptions options;
  options.authentication.clientCaFile = "/nonexistent/ca.crt";
  options.skipLookup = true;
  auto built = buildDelegatedAuth(options);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("client-ca-file"), std::string::npos);
}

}  // namespace delegation_options_test
}  // namespace gpuscale::auth
