#include "gpuscale/prom/credentials.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/prometheus_server.h"

namespace gpuscale::prom {
namespace credentials_test {

class CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::makeTempDir("gpuscale-auth-"); }
  void TearDown() override { test::removeTree(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    std::ofstream(dir_ + "/" + name) << content;
    return dir_ + "/" + name;
  }
  std::string dir_;
};

TEST_F(CredentialsTest, ReadsTheCurrentContextOfAKubeconfig) {
  write("ca.pem", "CA-PEM");
  std::string path = write("auth.yaml", R"(apiVersion: v1
kind: Config
current-context: prom
contexts:
- name: other
  context: {cluster: wrong, user: wrong}
- name: prom
  context: {cluster: c, user: u}
clusters:
- name: wrong
  cluster: {server: "https://x", insecure-skip-tls-verify: true}
- name: c
  cluster:
    server: https://ignored
    certificate-authority: ca.pem
users:
- name: wrong
  user: {token: nope}
- name: u
  user:
    tokenFile: token
    client-certificate-data: Q0VSVC1QRU0=
    client-key-data: S0VZLVBFTQ==
)");
  auto credentials = loadAuthConfig(path);
  ASSERT_TRUE(credentials.ok()) << credentials.status().toString();
  EXPECT_EQ(credentials->tls.caPem, "CA-PEM") << "file relative to the config";
  EXPECT_EQ(credentials->tokenFile, dir_ + "/token");
  EXPECT_EQ(credentials->tls.clientCertPem, "CERT-PEM") << "base64 -data field";
  EXPECT_EQ(credentials->tls.clientKeyPem, "KEY-PEM");
  EXPECT_FALSE(credentials->tls.insecureSkipTlsVerify) << "other clusters ignored";
  EXPECT_TRUE(credentials->bearerToken.empty()) << "other users ignored";
}

TEST_F(CredentialsTest, TokenAndBasicAuth) {
  std::string path = write("auth.yaml", R"(current-context: x
contexts: [{name: x, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: abc, username: me, password: pw}}]
)");
  auto credentials = loadAuthConfig(path);
  ASSERT_TRUE(credentials.ok()) << credentials.status().toString();
  EXPECT_EQ(credentials->bearerToken, "abc");
  EXPECT_EQ(credentials->basicAuth, "me:pw");
  EXPECT_TRUE(credentials->tls.insecureSkipTlsVerify);
}

TEST_F(CredentialsTest, ErrorsNameTheFile) {
  struct Row {
    const char* what;
    const char* content;
  } rows[] = {
      {"broken YAML", "users: [unclosed"},
      {"missing CA file",
       "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
       "clusters: [{name: c, cluster: {certificate-authority: nope.pem}}]\n"},
      {"bad base64",
       "current-context: x\ncontexts: [{name: x, context: {user: u}}]\n"
       "users: [{name: u, user: {client-key-data: '!!!'}}]\n"},
  };
  for (const auto& row : rows) {
    std::string path = write("bad.yaml", row.content);
    auto credentials = loadAuthConfig(path);
    ASSERT_FALSE(credentials.ok()) << row.what;
    EXPECT_NE(credentials.status().message().find(dir_), std::string::npos)
        << row.what << ": " << credentials.status().message();
  }
}

TEST_F(CredentialsTest, FlagsWinOverTheAuthConfig) {
  write("flag-ca.pem", "FLAG-CA");
  std::string path = write("auth.yaml", R"(current-context: x
contexts: [{name: x, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {certificate-authority-data: QVVUSC1DQQ==}}]
users: [{name: u, user: {token: from-config}}]
)");
  PrometheusOptions options;
  options.authConfigFile = path;
  options.caFile = dir_ + "/flag-ca.pem";
  options.tokenFile = dir_ + "/flag-token";
  auto credentials = resolveCredentials(options);
  ASSERT_TRUE(credentials.ok()) << credentials.status().toString();
  EXPECT_EQ(credentials->tls.caPem, "FLAG-CA");
  EXPECT_EQ(credentials->tokenFile, dir_ + "/flag-token");
  EXPECT_TRUE(credentials->bearerToken.empty()) << "a token file flag replaces the config token";
}

}  // namespace credentials_test
}  // namespace gpuscale::prom
